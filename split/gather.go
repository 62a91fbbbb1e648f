package split

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

func init() {
	Register(Info{
		Name:   "allgather",
		Doc:    "gather every (color, key, rank) entry on every rank (Bruck), keep the own color, sort it: O(n) memory, O(n lg n) time per rank",
		Source: "MPICH and Open MPI MPI_Comm_split; Sack 2011, sec. 2.2",
		Phases: []string{"gather", "sort", "build"},
		Run:    runAllgather,
	})
	Register(Info{
		Name:   "merge",
		Doc:    "the same gather, each step merging the sorted table received into the own sorted table: O(n) time per rank",
		Source: "Sack 2011, sec. 2.3.1",
		Phases: []string{"gather", "merge", "build"},
		Run:    runMerge,
	})
}

// round runs one round on c and counts what this rank sends.
func round(ctx context.Context, c Conn, st *Stats, sends []Send, recvs []Recv) error {
	for _, s := range sends {
		st.Messages++
		st.Bytes += int64(len(s.Data))
	}
	return c.Round(ctx, sends, recvs)
}

// expect checks that a receive got exactly want bytes.
func expect(r *Recv, want int) error {
	if r.N != want {
		return fmt.Errorf("%w: %d bytes from rank %d, expected %d", errs.Mismatch, r.N, r.From, want)
	}
	return nil
}

// runAllgather is the conventional split: Bruck's allgather of the
// entries, then the rank's color sorted by (key, rank).
func runAllgather(ctx context.Context, c Conn, me Entry, _ *Options, st *Stats) (*Sorted, error) {
	t := time.Now()
	n, r := c.Size(), c.Rank()
	all := make([]Entry, 1, n)
	all[0] = me
	for step, dist := 0, 1; dist < n; step, dist = step+1, dist*2 {
		cnt := min(dist, n-dist)
		in := make([]Entry, cnt)
		recvs := []Recv{{From: (r + dist) % n, Tag: step, Buf: entryBytesOf(in)}}
		if err := round(ctx, c, st, []Send{{To: (r - dist + n) % n, Tag: step, Data: entryBytesOf(all[:cnt])}}, recvs); err != nil {
			return nil, err
		}
		if err := expect(&recvs[0], cnt*entryBytes); err != nil {
			return nil, err
		}
		all = append(all, in...)
	}
	st.phase("gather", &t)
	if me.Color < 0 {
		return nil, nil
	}
	mine := slices.DeleteFunc(all, func(e Entry) bool { return e.Color != me.Color })
	slices.SortFunc(mine, compare)
	st.phase("sort", &t)
	return sortedOf(me, mine), nil
}

// runMerge is Sack's first improvement: the same Bruck gather, but every
// rank keeps its table sorted and merges what it receives, so the n lg n
// sort becomes lg n merges of total length O(n).
//
// Invariant before step k: the rank holds, sorted, the entries of the
// ranks r, r+1, …, r+2^k−1 (mod n). It sends its partner r−2^k those of
// the first min(2^k, n−2^k) of them, filtered out of its sorted table in
// order, and merges the same count received from r+2^k.
func runMerge(ctx context.Context, c Conn, me Entry, _ *Options, st *Stats) (*Sorted, error) {
	t := time.Now()
	n, r := c.Size(), c.Rank()
	have := make([]Entry, 1, n)
	have[0] = me
	next := make([]Entry, 0, n)
	var out []Entry
	var merging time.Duration
	for step, dist := 0, 1; dist < n; step, dist = step+1, dist*2 {
		cnt := min(dist, n-dist)
		send := have
		if cnt < len(have) {
			out = out[:0]
			for _, e := range have {
				if (int(e.Rank)-r+n)%n < cnt {
					out = append(out, e)
				}
			}
			send = out
		}
		in := make([]Entry, cnt)
		recvs := []Recv{{From: (r + dist) % n, Tag: step, Buf: entryBytesOf(in)}}
		if err := round(ctx, c, st, []Send{{To: (r - dist + n) % n, Tag: step, Data: entryBytesOf(send)}}, recvs); err != nil {
			return nil, err
		}
		if err := expect(&recvs[0], cnt*entryBytes); err != nil {
			return nil, err
		}
		m0 := time.Now()
		next = mergeInto(next[:0], have, in)
		have, next = next, have
		merging += time.Since(m0)
	}
	// The rounds (messages and waiting) and the merges between them, as
	// two phases.
	st.split("gather", "merge", merging, &t)
	if me.Color < 0 {
		return nil, nil
	}
	return sortedOf(me, colorRange(have, me.Color)), nil
}

// mergeInto appends the merge of the sorted a and b to dst.
func mergeInto(dst, a, b []Entry) []Entry {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if compare(b[j], a[i]) < 0 {
			dst = append(dst, b[j])
			j++
		} else {
			dst = append(dst, a[i])
			i++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}
