package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/scoll/scoll/internal/wire"
	"github.com/scoll/scoll/split"
	"github.com/scoll/scoll/transport/inproc"
)

// Sack's Table 2.1: where the time of the parallel sort goes.
//
// The thesis ran the parallel sort for real on p processes and emulated
// the recursive-doubling collect that precedes it with two processes
// exchanging the right amount of data. RunSortPhases does the same on p
// in-process sorting ranks, each paired with a feeder rank: the feeder
// hands its sorter the sorted tables of the collect's lg(n/p) steps (1, 2,
// 4, … entries; n/p in all), which the sorter merges as it would the
// tables of its collect group; then the sorters run cheng's splitters,
// exchange and merge phases (split.SortPhases) for real. Every message,
// the feeders' too, goes through the rounds a split's messages take
// (internal/wire's Conn).
//
// With up to 64 sorters on a machine of few cores, wall-clock phases
// cannot shrink as n/p: each phase is timed as the CPU time of the sorter's
// own thread (each sorter is locked to one), and a row reports the busiest
// sorter's. Waiting for others costs no CPU; the work a message needs is
// charged to whichever thread copies it.

// SortPhasesConfig configures RunSortPhases.
type SortPhasesConfig struct {
	// Entries are the table sizes n (the communicator's size).
	Entries []int64
	// Sorters are the numbers of sorting ranks p.
	Sorters []int
	// Reps repetitions per row; the row keeps the median of each phase.
	Reps int
	Seed uint64
	// Row, when set, gets each row as soon as it is measured.
	Row func(SortPhasesRow)
}

// SortPhasesRow is one (n, p) measurement: the busiest sorter's CPU time
// per phase (medians over the repetitions), and the wall time of the whole
// sort.
type SortPhasesRow struct {
	Entries                                    int64 `json:"entries"`
	Sorters                                    int   `json:"sorters"`
	Collect, Splitters, Exchange, Merge, Total time.Duration
	Wall                                       time.Duration
}

// RunSortPhases measures every (n, p) of cfg.
func RunSortPhases(ctx context.Context, cfg SortPhasesConfig) ([]SortPhasesRow, error) {
	if cfg.Reps < 1 {
		cfg.Reps = 1
	}
	var out []SortPhasesRow
	for _, n := range cfg.Entries {
		for _, p := range cfg.Sorters {
			if p < 1 || int64(p) > n {
				return out, fmt.Errorf("%w: %d sorters for %d entries", ErrConfig, p, n)
			}
			var reps []SortPhasesRow
			for rep := range cfg.Reps {
				row, err := sortPhasesOnce(ctx, n, p, cfg.Seed+uint64(rep))
				if err != nil {
					return out, fmt.Errorf("n=%d p=%d: %w", n, p, err)
				}
				reps = append(reps, row)
			}
			row := SortPhasesRow{Entries: n, Sorters: p}
			med := func(f func(SortPhasesRow) time.Duration) time.Duration {
				v := make([]float64, len(reps))
				for i, r := range reps {
					v[i] = float64(f(r))
				}
				return time.Duration(Median(v))
			}
			row.Collect = med(func(r SortPhasesRow) time.Duration { return r.Collect })
			row.Splitters = med(func(r SortPhasesRow) time.Duration { return r.Splitters })
			row.Exchange = med(func(r SortPhasesRow) time.Duration { return r.Exchange })
			row.Merge = med(func(r SortPhasesRow) time.Duration { return r.Merge })
			row.Total = med(func(r SortPhasesRow) time.Duration { return r.Total })
			row.Wall = med(func(r SortPhasesRow) time.Duration { return r.Wall })
			out = append(out, row)
			if cfg.Row != nil {
				cfg.Row(row)
			}
			runtime.GC()
		}
	}
	return out, nil
}

// sortPhasesOnce runs one (n, p) measurement.
func sortPhasesOnce(ctx context.Context, n int64, p int, seed uint64) (SortPhasesRow, error) {
	w := inproc.NewWorld(2 * p)
	defer w.Close()
	sorters := make([]int, p)
	for i := range sorters {
		sorters[i] = i
	}
	type result struct {
		phases map[string]time.Duration
		wall   time.Duration
		piece  []split.Entry
		err    error
	}
	res := make([]result, p)
	ready := make(chan struct{}) // feeders have made their tables
	var feeders, start sync.WaitGroup
	var wg sync.WaitGroup
	for s := range p {
		lo := int64(s)*(n/int64(p)) + min(int64(s), n%int64(p))
		size := n / int64(p)
		if int64(s) < n%int64(p) {
			size++
		}
		// The feeder: the sorted tables of the collect's steps.
		feeders.Add(1)
		wg.Add(1)
		start.Add(1)
		go func() {
			defer wg.Done()
			conn := sortConn(w, p+s, 2*p)
			rng := rand.New(rand.NewPCG(seed, uint64(s)))
			var blocks [][]split.Entry
			next := lo + 1 // the sorter's own entry is lo
			for d := int64(1); d < size; d *= 2 {
				b := make([]split.Entry, min(d, size-d))
				for i := range b {
					b[i] = split.Entry{Key: rng.Int64(), Rank: int32(next), Addr: int32(next)}
					next++
				}
				slices.SortFunc(b, split.Compare)
				blocks = append(blocks, b)
			}
			feeders.Done()
			start.Wait()
			var sends []split.Send
			for k, b := range blocks {
				sends = append(sends, split.Send{To: s, Tag: k, Data: split.EntryBytes(b)})
			}
			if err := conn.Round(ctx, sends, nil); err != nil {
				res[s].err = err
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			conn := sortConn(w, s, 2*p)
			rng := rand.New(rand.NewPCG(seed, 1<<32+uint64(s)))
			st := &split.Stats{Clock: threadCPU}
			start.Done()
			<-ready
			t0 := time.Now()
			st.StartClock()
			c0 := threadCPU()
			have := []split.Entry{{Key: rng.Int64(), Rank: int32(lo), Addr: int32(lo)}}
			for k, d := 0, int64(1); d < size; k, d = k+1, d*2 {
				in := make([]split.Entry, min(d, size-d))
				recvs := []split.Recv{{From: p + s, Tag: k, Buf: split.EntryBytes(in)}}
				if err := conn.Round(ctx, nil, recvs); err != nil {
					res[s].err = err
					return
				}
				have = split.MergeInto(make([]split.Entry, 0, len(have)+len(in)), have, in)
			}
			collect := threadCPU() - c0
			st.StartClock()
			piece, err := split.SortPhases(ctx, conn, sorters, s, have, st)
			res[s] = result{phases: map[string]time.Duration{"collect": collect}, wall: time.Since(t0), piece: piece, err: err}
			for _, ph := range st.Phases {
				res[s].phases[ph.Name] += ph.CPU
			}
		}()
	}
	feeders.Wait()
	close(ready)
	wg.Wait()
	row := SortPhasesRow{Entries: n, Sorters: p}
	var all int64
	var last split.Entry
	for s, r := range res {
		if r.err != nil {
			return row, fmt.Errorf("sorter %d: %w", s, r.err)
		}
		// The pieces, in order, must be sorted and hold every entry.
		for i, e := range r.piece {
			if (s > 0 || i > 0) && split.Compare(last, e) >= 0 {
				return row, fmt.Errorf("sorter %d: entry %d out of order", s, i)
			}
			last = e
		}
		all += int64(len(r.piece))
		row.Collect = max(row.Collect, r.phases["collect"])
		row.Splitters = max(row.Splitters, r.phases["splitters"])
		row.Exchange = max(row.Exchange, r.phases["exchange"])
		row.Merge = max(row.Merge, r.phases["merge"])
		row.Total = max(row.Total, r.phases["collect"]+r.phases["splitters"]+r.phases["exchange"]+r.phases["merge"])
		row.Wall = max(row.Wall, r.wall)
	}
	if all != n {
		return row, fmt.Errorf("the sorters hold %d entries, want %d", all, n)
	}
	return row, nil
}

// sortConn returns rank r's connection for the sort, on a world of size
// ranks: the construction rounds of internal/wire (wire.Conn, the
// split.Conn every split runs on), as a fresh world's first split would
// have them (context id 0, the world's; call number 1).
func sortConn(w *inproc.World, r, size int) *wire.Conn {
	return wire.NewConn(&wire.Endpoint{T: w.Endpoint(r), Rank: r, Size: size}, 1, sortSig)
}

// sortSig is the signature of the sort's messages.
const sortSig = 0x736f7274 // "sort"

// WriteSortPhases writes rows as a table shaped like Sack's Table 2.1:
// per n, a line per phase with a column per p, in seconds.
func WriteSortPhases(w io.Writer, rows []SortPhasesRow) error {
	var ns []int64
	var ps []int
	at := map[[2]int64]SortPhasesRow{}
	for _, r := range rows {
		if !slices.Contains(ns, r.Entries) {
			ns = append(ns, r.Entries)
		}
		if !slices.Contains(ps, r.Sorters) {
			ps = append(ps, r.Sorters)
		}
		at[[2]int64{r.Entries, int64(r.Sorters)}] = r
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "entries\tphase\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "p=%d\t", p)
	}
	fmt.Fprintln(tw)
	for _, n := range ns {
		for _, ph := range []string{"collect", "splitters", "exchange", "merge", "total", "wall"} {
			fmt.Fprintf(tw, "%s\t%s\t", FormatSize(int(n)), ph)
			for _, p := range ps {
				r, ok := at[[2]int64{n, int64(p)}]
				if !ok {
					fmt.Fprint(tw, "-\t")
					continue
				}
				d := map[string]time.Duration{"collect": r.Collect, "splitters": r.Splitters, "exchange": r.Exchange, "merge": r.Merge, "total": r.Total, "wall": r.Wall}[ph]
				fmt.Fprintf(tw, "%.3f\t", d.Seconds())
			}
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}
