package bench

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/scoll/scoll"
)

// A runner is one rank's instance of a configuration: its buffers filled
// with known inputs, the call to time and the check of its result.
type runner interface {
	call(ctx context.Context) error
	check() error
	// algorithm returns the algorithm scoll picks for the call when it
	// names none, as a persistent request of the same call reports it.
	algorithm(ctx context.Context) (string, error)
}

// number is the element types Config.Type names: scoll's arithmetic
// element types (scoll.Number also has pairs, which the benchmark does not
// measure).
type number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// elemType is an element type Config.Type names: its size in bytes and
// its instantiation of a configuration.
type elemType struct {
	name    string
	size    int
	newCase func(c *config, comm *scoll.Comm, n int, opts []scoll.CallOption) runner
}

// typeOf returns the element type T, called name.
func typeOf[T number](name string) elemType {
	var z T
	return elemType{name, int(unsafe.Sizeof(z)), func(c *config, comm *scoll.Comm, n int, opts []scoll.CallOption) runner {
		return newTyped[T](c, comm, n, opts)
	}}
}

// elemTypes is the one place that maps the runtime element type to an
// instantiation, in the order Types lists them.
var elemTypes = []elemType{
	typeOf[float32]("float32"), typeOf[float64]("float64"),
	typeOf[int8]("int8"), typeOf[int16]("int16"), typeOf[int32]("int32"), typeOf[int64]("int64"),
	typeOf[uint8]("uint8"), typeOf[uint16]("uint16"), typeOf[uint32]("uint32"), typeOf[uint64]("uint64"),
}

// lookupType returns the element type called name.
func lookupType(name string) (elemType, bool) {
	for _, t := range elemTypes {
		if t.name == name {
			return t, true
		}
	}
	return elemType{}, false
}

// elemSize returns the size in bytes of the named element type, 0 if unknown.
func elemSize(typ string) int {
	t, _ := lookupType(typ)
	return t.size
}

// newCase instantiates configuration c for its element type.
func newCase(c *config, comm *scoll.Comm, n int, opts []scoll.CallOption) (runner, error) {
	t, ok := lookupType(c.Type)
	if !ok {
		return nil, fmt.Errorf("%w: unknown type %q", ErrConfig, c.Type)
	}
	return t.newCase(c, comm, n, opts), nil
}

// period is the period in the element index of the input values: a prime,
// so that shifting data by any block of a power-of-two length is detected.
const period = 251

// val is element i of the input of source a: a small positive integer,
// exact in every element type (integer sums wrap identically in the
// reference and the kernels; float sums stay far below 2²⁴).
func val[T number](a, i int) T {
	return T((a*37+i)%period + 1)
}

// sentinel fills buffers whose content a collective must overwrite (or, for
// exscan on rank 0, leave alone).
const sentinel = 99

type typed[T number] struct {
	op         string
	comm       *scoll.Comm
	rank, np   int
	root, n    int
	send, recv []T
	opts       []scoll.CallOption
	fn         func(ctx context.Context) error
	init       func(ctx context.Context) (*scoll.Persistent, error)
}

func newTyped[T number](c *config, comm *scoll.Comm, n int, opts []scoll.CallOption) *typed[T] {
	k := &typed[T]{op: c.Op, comm: comm, rank: comm.Rank(), np: comm.Size(), root: c.Root, n: n, opts: opts}
	r, np, root := k.rank, k.np, k.root
	fill := func(s []T, src int) { fillPeriodic(s, vals[T](src)) }
	sent := func(s []T) { fillPeriodic(s, constant[T](sentinel)) }
	switch c.Op {
	case "bcast":
		k.recv = make([]T, n)
		if r == root {
			fill(k.recv, root)
		} else {
			sent(k.recv)
		}
		k.fn = func(ctx context.Context) error { return scoll.Bcast(ctx, comm, k.recv, root, opts...) }
		k.init = func(ctx context.Context) (*scoll.Persistent, error) {
			return scoll.BcastInit(ctx, comm, k.recv, root, opts...)
		}
	case "allreduce", "reduce", "scan", "exscan":
		k.send, k.recv = make([]T, n), make([]T, n)
		fill(k.send, r)
		sent(k.recv)
		if c.Op == "reduce" {
			k.fn = func(ctx context.Context) error {
				return scoll.Reduce(ctx, comm, k.send, k.recv, scoll.Sum, root, opts...)
			}
			k.init = func(ctx context.Context) (*scoll.Persistent, error) {
				return scoll.ReduceInit(ctx, comm, k.send, k.recv, scoll.Sum, root, opts...)
			}
			break
		}
		// Allreduce, Scan and Exscan take the same arguments.
		call, init := scoll.Allreduce[T], scoll.AllreduceInit[T]
		switch c.Op {
		case "scan":
			call, init = scoll.Scan[T], scoll.ScanInit[T]
		case "exscan":
			call, init = scoll.Exscan[T], scoll.ExscanInit[T]
		}
		k.fn = func(ctx context.Context) error { return call(ctx, comm, k.send, k.recv, scoll.Sum, opts...) }
		k.init = func(ctx context.Context) (*scoll.Persistent, error) {
			return init(ctx, comm, k.send, k.recv, scoll.Sum, opts...)
		}
	case "allgather", "gather":
		k.send, k.recv = make([]T, n), make([]T, n*np)
		fill(k.send, r)
		sent(k.recv)
		if c.Op == "allgather" {
			k.fn = func(ctx context.Context) error { return scoll.Allgather(ctx, comm, k.send, k.recv, opts...) }
			k.init = func(ctx context.Context) (*scoll.Persistent, error) {
				return scoll.AllgatherInit(ctx, comm, k.send, k.recv, opts...)
			}
		} else {
			if r != root {
				k.recv = nil
			}
			k.fn = func(ctx context.Context) error { return scoll.Gather(ctx, comm, k.send, k.recv, root, opts...) }
			k.init = func(ctx context.Context) (*scoll.Persistent, error) {
				return scoll.GatherInit(ctx, comm, k.send, k.recv, root, opts...)
			}
		}
	case "scatter":
		k.recv = make([]T, n)
		sent(k.recv)
		if r == root {
			k.send = make([]T, n*np)
			for j := range np {
				fill(k.send[j*n:(j+1)*n], j)
			}
		}
		k.fn = func(ctx context.Context) error { return scoll.Scatter(ctx, comm, k.send, k.recv, root, opts...) }
		k.init = func(ctx context.Context) (*scoll.Persistent, error) {
			return scoll.ScatterInit(ctx, comm, k.send, k.recv, root, opts...)
		}
	case "alltoall":
		k.send, k.recv = make([]T, n*np), make([]T, n*np)
		for j := range np {
			fill(k.send[j*n:(j+1)*n], r*np+j)
		}
		sent(k.recv)
		k.fn = func(ctx context.Context) error { return scoll.Alltoall(ctx, comm, k.send, k.recv, opts...) }
		k.init = func(ctx context.Context) (*scoll.Persistent, error) {
			return scoll.AlltoallInit(ctx, comm, k.send, k.recv, opts...)
		}
	case "reducescatter":
		k.send, k.recv = make([]T, n*np), make([]T, n)
		fill(k.send, r)
		sent(k.recv)
		k.fn = func(ctx context.Context) error {
			return scoll.ReduceScatterBlock(ctx, comm, k.send, k.recv, scoll.Sum, opts...)
		}
		k.init = func(ctx context.Context) (*scoll.Persistent, error) {
			return scoll.ReduceScatterBlockInit(ctx, comm, k.send, k.recv, scoll.Sum, opts...)
		}
	case "barrier":
		k.fn = func(ctx context.Context) error { return scoll.Barrier(ctx, comm, opts...) }
		k.init = func(ctx context.Context) (*scoll.Persistent, error) { return scoll.BarrierInit(ctx, comm, opts...) }
	}
	return k
}

func (k *typed[T]) call(ctx context.Context) error { return k.fn(ctx) }

func (k *typed[T]) algorithm(ctx context.Context) (string, error) {
	p, err := k.init(ctx)
	if err != nil {
		return "", err
	}
	return p.Algorithm(), nil
}

// vals returns val(src, i) for i in one period.
func vals[T number](src int) []T {
	tab := make([]T, period)
	for i := range tab {
		tab[i] = val[T](src, i)
	}
	return tab
}

// constant returns one period of v.
func constant[T number](v T) []T {
	tab := make([]T, period)
	for i := range tab {
		tab[i] = v
	}
	return tab
}

// fillPeriodic sets s[i] = tab[i%period], copying doubling runs (large
// buffers fill at memory speed).
func fillPeriodic[T number](s, tab []T) {
	k := copy(s, tab)
	for k < len(s) {
		k += copy(s[k:], s[:k])
	}
}

// expect checks got[i] == tab[(off+i)%period] for every i.
func expect[T number](what string, got, tab []T, off int) error {
	j := off % period
	for i, g := range got {
		if g != tab[j] {
			return fmt.Errorf("%s[%d] = %v, want %v", what, i, g, tab[j])
		}
		if j++; j == period {
			j = 0
		}
	}
	return nil
}

// sums returns the reference sum over sources lo..hi-1 of val(src, i) for i
// in one period: element i of the reduced vector is sums[i%period].
func sums[T number](lo, hi int) []T {
	tab := make([]T, period)
	for s := lo; s < hi; s++ {
		for i := range tab {
			tab[i] += val[T](s, i)
		}
	}
	return tab
}

// check compares this rank's output to the reference.
func (k *typed[T]) check() error {
	r, np, n := k.rank, k.np, k.n
	// blocks checks block b of recv against source src(b).
	blocks := func(src func(b int) int) error {
		for b := range np {
			if err := expect(fmt.Sprintf("recv block %d: element", b), k.recv[b*n:(b+1)*n], vals[T](src(b)), 0); err != nil {
				return err
			}
		}
		return nil
	}
	switch k.op {
	case "bcast":
		return expect("buf", k.recv, vals[T](k.root), 0)
	case "allreduce":
		return expect("recv", k.recv, sums[T](0, np), 0)
	case "reduce":
		if r != k.root {
			return nil
		}
		return expect("recv", k.recv, sums[T](0, np), 0)
	case "scan":
		return expect("recv", k.recv, sums[T](0, r+1), 0)
	case "exscan":
		if r == 0 {
			return expect("recv (rank 0, must be unchanged)", k.recv, constant[T](sentinel), 0)
		}
		return expect("recv", k.recv, sums[T](0, r), 0)
	case "allgather", "gather":
		if k.op == "gather" && r != k.root {
			return nil
		}
		return blocks(func(b int) int { return b })
	case "scatter":
		return expect("recv", k.recv, vals[T](r), 0)
	case "alltoall":
		return blocks(func(b int) int { return b*np + r })
	case "reducescatter":
		return expect("recv", k.recv, sums[T](0, np), r*n)
	}
	return nil
}
