package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
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
//
// Of Common, RunSortPhases takes Reps (repetitions per row, whose median
// of each phase the row keeps; 0: 1), Seed (of the keys; repetition k
// uses Seed+k) and Progress (before each repetition).
type SortPhasesConfig struct {
	Common
	// Entries are the table sizes n (the communicator's size).
	Entries []int64
	// Sorters are the numbers of sorting ranks p.
	Sorters []int
	// OnRow, when set, gets each row as soon as it is measured.
	OnRow func(SortPhasesRow)
}

// SortPhases are the phases of a SortPhasesRow, in order: the four of the
// sort, their sum ("total") and the wall time of the whole sort ("wall").
var SortPhases = []string{"collect", "splitters", "exchange", "merge", "total", "wall"}

// SortPhasesRow is one (n, p) measurement: the busiest sorter's CPU time
// per phase and their sum (medians over the repetitions), and the wall
// time of the whole sort, in seconds.
type SortPhasesRow struct {
	Entries    int64   `json:"entries"`
	Sorters    int     `json:"sorters"`
	CollectS   float64 `json:"collect_s"`
	SplittersS float64 `json:"splitters_s"`
	ExchangeS  float64 `json:"exchange_s"`
	MergeS     float64 `json:"merge_s"`
	TotalS     float64 `json:"total_s"`
	WallS      float64 `json:"wall_s"`
}

// Seconds returns the row's times in the order of SortPhases.
func (r SortPhasesRow) Seconds() []float64 {
	return []float64{r.CollectS, r.SplittersS, r.ExchangeS, r.MergeS, r.TotalS, r.WallS}
}

// setSeconds sets the row's times from t, in the order of SortPhases.
func (r *SortPhasesRow) setSeconds(t []float64) {
	r.CollectS, r.SplittersS, r.ExchangeS, r.MergeS, r.TotalS, r.WallS = t[0], t[1], t[2], t[3], t[4], t[5]
}

// RunSortPhases measures every (n, p) of cfg.
func RunSortPhases(ctx context.Context, cfg SortPhasesConfig) (*Results[SortPhasesRow], error) {
	if err := cfg.Common.normalize(defaults{harness: "bench.RunSortPhases", reps: 1, takes: takesReps | takesSeed}); err != nil {
		return nil, err
	}
	out := &Results[SortPhasesRow]{}
	total := len(cfg.Entries) * len(cfg.Sorters) * cfg.Reps
	done := 0
	for _, n := range cfg.Entries {
		for _, p := range cfg.Sorters {
			if p < 1 || int64(p) > n {
				return out, fmt.Errorf("%w: %d sorters for %d entries", ErrConfig, p, n)
			}
			times := make([][]float64, len(SortPhases)) // per phase, per repetition
			for rep := range cfg.Reps {
				cfg.step(done, total, "%s entries, %d sorters, repetition %d of %d", FormatSize(int(n)), p, rep+1, cfg.Reps)
				done++
				row, err := sortPhasesOnce(ctx, n, p, cfg.Seed+uint64(rep))
				if err != nil {
					return out, fmt.Errorf("n=%d p=%d: %w", n, p, err)
				}
				for k, t := range row.Seconds() {
					times[k] = append(times[k], t)
				}
			}
			row := SortPhasesRow{Entries: n, Sorters: p}
			med := make([]float64, len(times))
			for k, t := range times {
				med[k] = Median(t)
			}
			row.setSeconds(med)
			add(out, cfg.OnRow, row)
			runtime.GC()
		}
	}
	cfg.ended(total)
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
	// Every count is set before any goroutine waits: a feeder waits for
	// all sorters to have started (start), and a WaitGroup must not grow
	// from zero while it is waited for.
	var feeders, start, wg sync.WaitGroup
	feeders.Add(p)
	start.Add(p)
	wg.Add(2 * p)
	for s := range p {
		lo := int64(s)*(n/int64(p)) + min(int64(s), n%int64(p))
		size := n / int64(p)
		if int64(s) < n%int64(p) {
			size++
		}
		// The feeder: the sorted tables of the collect's steps.
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
	busiest := make([]time.Duration, len(SortPhases))
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
		var sum time.Duration
		for k, ph := range SortPhases[:4] {
			busiest[k] = max(busiest[k], r.phases[ph])
			sum += r.phases[ph]
		}
		busiest[4], busiest[5] = max(busiest[4], sum), max(busiest[5], r.wall)
	}
	if all != n {
		return row, fmt.Errorf("the sorters hold %d entries, want %d", all, n)
	}
	secs := make([]float64, len(busiest))
	for k, d := range busiest {
		secs[k] = d.Seconds()
	}
	row.setSeconds(secs)
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

// Layout implements Row: entries, sorters and each phase in seconds
// (CSV: collect_s, ..., wall_s).
func (SortPhasesRow) Layout() *Layout[SortPhasesRow] { return sortPhasesRows }

// sortPhasesRows is the layout of sort-phase rows.
var sortPhasesRows = func() *Layout[SortPhasesRow] {
	l := &Layout[SortPhasesRow]{
		Rows: "split phases",
		Columns: []Column[SortPhasesRow]{
			{Name: "entries", Text: func(r SortPhasesRow) string { return strconv.FormatInt(r.Entries, 10) }, Head: "entries",
				Cell: func(r SortPhasesRow) string { return FormatSize(int(r.Entries)) }},
			{Name: "sorters", Text: func(r SortPhasesRow) string { return strconv.Itoa(r.Sorters) }, Head: "sorters"},
		},
	}
	for k, ph := range SortPhases {
		l.Columns = append(l.Columns, Column[SortPhasesRow]{Name: ph + "_s", Unit: "s", Head: ph + " s",
			Text: func(r SortPhasesRow) string { return fixed(r.Seconds()[k], 6) },
			Cell: func(r SortPhasesRow) string { return fixed(r.Seconds()[k], 3) }})
	}
	return l
}()

// sackLine is a line of Sack's Table 2.1: one phase at one table size,
// its seconds per number of sorters ("-" where not measured).
type sackLine struct {
	entries int64
	phase   string
	cells   []string
}

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
	l := &Layout[sackLine]{Rows: "split phases", Columns: []Column[sackLine]{
		{Head: "entries", Cell: func(s sackLine) string { return FormatSize(int(s.entries)) }},
		{Head: "phase", Cell: func(s sackLine) string { return s.phase }},
	}}
	for i, p := range ps {
		l.Columns = append(l.Columns, Column[sackLine]{Head: "p=" + strconv.Itoa(p), Cell: func(s sackLine) string { return s.cells[i] }})
	}
	var lines []sackLine
	for _, n := range ns {
		for k, ph := range SortPhases {
			line := sackLine{entries: n, phase: ph}
			for _, p := range ps {
				c := "-"
				if r, ok := at[[2]int64{n, int64(p)}]; ok {
					c = fixed(r.Seconds()[k], 3)
				}
				line.cells = append(line.cells, c)
			}
			lines = append(lines, line)
		}
	}
	return write(w, "table", l, lines)
}
