//go:build mpi

package main

/*
#include <mpi.h>
#include "dropin.h"
*/
import "C"

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/scoll/scoll"
	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/transport/mpi"
	"github.com/scoll/scoll/tuning"
)

// The drop-in's state: the scoll communicators of the MPI communicators
// it knows and what it handled. Only the application's thread that calls
// MPI runs this code (MPI's thread levels are the application's business),
// one call at a time per process but for MPI_THREAD_MULTIPLE programs,
// which the C side does not yet serialise.
var (
	ep *mpi.Caller
	// comms are the drop-in's communicators by handle (an attribute on
	// the MPI communicator holds it); 0 is MPI_COMM_WORLD's.
	comms      = map[C.int]*dcomm{}
	nextHandle C.int
	// handled counts the calls scoll ran, by collective, and by algorithm
	// (the forwarded ones are counted in C: dropin_forwarded).
	handled [C.NUM_COLLS]int
	algs    [C.NUM_COLLS]map[string]int
	// chosen receives the algorithm of each handled call (chosenOpt).
	chosen    string
	chosenOpt = scoll.WithChosen(&chosen)
	// tuned is the tuning file (SCOLL_TUNING's, else the built-in rules):
	// per collective, size and number of ranks, native or an algorithm.
	tuned *tuning.File
	// force is what the environment decides per collective, overriding
	// the rules.
	force [C.NUM_COLLS]forced
	// named marks the collectives whose algorithm SCOLL_ALGORITHM_<COLL>
	// names (scoll applies it; the network's choice does not override it).
	named [C.NUM_COLLS]bool
	// clairvoyantSites: SCOLL_ALGORITHM_REDUCE=clairvoyant; MPI_Reduce
	// calls then name their call site (the caller's return address).
	clairvoyantSites bool
	// splitOpts are the options of scoll's splits (SCOLL_ALGORITHM_SPLIT).
	splitOpts []scoll.SplitOption
	// net is the network SCOLL_TOPOLOGY describes (nil: none).
	net *network
	// plain are the options of a call with nothing to add (read only).
	plain = []scoll.CallOption{chosenOpt}
)

// defaultRules are the rules the drop-in follows without SCOLL_TUNING
// (a tuning file: see package tuning), measured on 2 and 4 processes of
// one node with scripts/dropin-bench.sh (docs/dropin.md).
//
//go:embed defaults.json
var defaultRules []byte

// forced is what the environment says of a collective.
type forced uint8

const (
	byRules     forced = iota // the tuning rules choose per call
	forceNative               // every call forwarded
	forceScoll                // every call scoll can run
)

// dcomm is a scoll communicator and the rules for its calls.
type dcomm struct {
	c *scoll.Comm
	// rules are the tuning rules for this communicator's size, by
	// collective (tuning.File.For).
	rules [C.NUM_COLLS][]tuning.Rule
	// members are its ranks' world ranks (made when net needs them).
	members []int
}

// options returns the options of a call of coll on count elements of elem
// bytes: the report's, and on a known network (SCOLL_TOPOLOGY) the
// algorithm the network's model charges least, unless the environment
// names one.
func (d *dcomm) options(coll C.int, count, elem int) []scoll.CallOption {
	sc, ok := schedule.ParseCollective(scollNames[coll])
	if net == nil || named[coll] || !ok {
		return plain
	}
	if d.members == nil {
		all := identity(d.c.Size())
		m, err := d.c.TranslateRanks(all, comms[0].c)
		if err != nil {
			return plain
		}
		d.members = m
	}
	ch := net.choose(sc, d.members, count, elem)
	if ch.alg == "" {
		return plain
	}
	opts := []scoll.CallOption{chosenOpt, scoll.WithAlgorithm(ch.alg)}
	if ch.grid != nil {
		opts = append(opts, scoll.WithGrid(ch.grid...))
	}
	return opts
}

func newDcomm(c *scoll.Comm) *dcomm {
	d := &dcomm{c: c}
	for coll, name := range scollNames {
		if sc, ok := schedule.ParseCollective(name); ok {
			d.rules[coll] = tuned.For(sc, c.Size())
		}
	}
	return d
}

// publish gives the C side d's choices under handle h, so that calls the
// rules send to the MPI library go there without calling into Go.
func (d *dcomm) publish(h C.int) {
	for coll := range d.rules {
		var mins []C.int64_t
		var nat []C.char
		switch force[coll] {
		case forceNative:
			mins, nat = []C.int64_t{0}, []C.char{1}
		case byRules:
			for _, r := range d.rules[coll] {
				mins = append(mins, C.int64_t(r.MinBytes))
				nat = append(nat, C.char(b2i(r.Algorithm == tuning.Native)))
			}
		}
		if len(mins) == 0 {
			C.dropin_set_rules(h, C.int(coll), 0, nil, nil)
			continue
		}
		C.dropin_set_rules(h, C.int(coll), C.int(len(mins)), &mins[0], &nat[0])
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// native reports whether a call of coll moving bytes (the message size of
// package tuning: OSU's) goes to the MPI library.
func (d *dcomm) native(coll C.int, bytes int) bool {
	switch force[coll] {
	case forceNative:
		return true
	case forceScoll:
		return false
	}
	rs := d.rules[coll]
	return len(rs) > 0 && tuning.Choose(rs, bytes) == tuning.Native
}

// collNames are the collectives' names in the report, in the order of
// dropin.h's COLL_ constants (the conversion fails at load time if the
// counts differ); scollNames are scoll's names of the same collectives
// (its tuning files' and SCOLL_ALGORITHM_<NAME>'s), "-" for the
// constructors.
var (
	collNames = [C.NUM_COLLS]string(strings.Fields(`allreduce bcast barrier reduce scan exscan
	reduce_scatter_block allgather alltoall gather scatter comm_split comm_dup allgatherv reduce_scatter alltoallv
	gatherv scatterv comm_split_type comm_create comm_free`))
	scollNames = [C.NUM_COLLS]string(strings.Fields(`allreduce bcast barrier reduce scan exscan
	reducescatter allgather alltoall gather scatter - - allgatherv reducescatterv alltoallv
	gatherv scatterv - - -`))
)

var ops = map[C.int]scoll.Op{C.OP_SUM: scoll.Sum, C.OP_PROD: scoll.Prod, C.OP_MAX: scoll.Max, C.OP_MIN: scoll.Min,
	C.OP_MINLOC: scoll.MinLoc, C.OP_MAXLOC: scoll.MaxLoc,
	C.OP_LAND: scoll.Land, C.OP_LOR: scoll.Lor, C.OP_BAND: scoll.Band, C.OP_BOR: scoll.Bor, C.OP_BXOR: scoll.Bxor}

//export scollmpi_init
func scollmpi_init(rank, size C.int) C.int {
	// One rank per core is MPI's usual layout, and the drop-in runs on the
	// application's thread: the Go runtime needs no more than one CPU
	// (its collector's helpers included) unless GOMAXPROCS says otherwise.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	cfg, err := agree(int(rank))
	if err == nil {
		err = configure(cfg)
	}
	if err == nil {
		net, err = newNetwork(os.Getenv, int(size))
	}
	if err == nil {
		ep, err = mpi.NewCaller(int(C.dropin_world_f()))
	}
	if err != nil { // alike on every rank: the configuration is rank 0's
		if rank == 0 {
			fmt.Fprintf(os.Stderr, "scoll drop-in: %v; every collective goes to the MPI library\n", err)
		}
		return 1
	}
	comms[0], nextHandle = newDcomm(scoll.NewComm(ep, scoll.WithTuning(scollRules(tuned)))), 1
	comms[0].publish(0)
	return 0
}

// config is what every rank takes from rank 0, so that the ranks decide
// alike even when their environments or files differ: rank 0's SCOLL_
// environment variables and its tuning file's contents.
type config struct {
	Env    map[string]string `json:"env"`
	Tuning []byte            `json:"tuning,omitempty"`
}

// agree returns rank 0's config on every rank (one broadcast of its size,
// one of its bytes), and makes it this rank's SCOLL_ environment.
func agree(rank int) (*config, error) {
	var b []byte
	if rank == 0 {
		cfg := config{Env: map[string]string{}}
		for _, kv := range os.Environ() {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SCOLL_") {
				cfg.Env[k] = v
			}
		}
		if path := cfg.Env[scoll.EnvTuning]; path != "" {
			t, err := os.ReadFile(path)
			if err != nil {
				t = []byte("unreadable: " + err.Error()) // fails to parse on every rank
			}
			cfg.Tuning = t
		}
		b, _ = json.Marshal(&cfg)
	}
	n := C.int(len(b))
	if rc := C.dropin_bcast(unsafe.Pointer(&n), C.int(unsafe.Sizeof(n))); rc != 0 {
		return nil, fmt.Errorf("MPI error %d agreeing on the configuration", int(rc))
	}
	if rank != 0 {
		b = make([]byte, n)
	}
	if rc := C.dropin_bcast(unsafe.Pointer(&b[0]), n); rc != 0 {
		return nil, fmt.Errorf("MPI error %d agreeing on the configuration", int(rc))
	}
	var cfg config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, err
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SCOLL_") {
			os.Unsetenv(k)
		}
	}
	for k, v := range cfg.Env {
		os.Setenv(k, v)
	}
	return &cfg, nil
}

// Environment variables of the drop-in (besides scoll's own: settings.go).
const (
	// EnvChoice chooses between scoll and the MPI library for every
	// collective: "tuned" (the default: the tuning rules per call),
	// "scoll" (scoll runs every call it can) or "native" (every call
	// goes to the MPI library; the drop-in only counts).
	EnvChoice = "SCOLL_MPI_CHOICE"
	// EnvReport names the file every rank appends its report to at
	// MPI_Finalize.
	EnvReport = "SCOLL_MPI_REPORT"
	// EnvSplit names scoll's split algorithm for MPI_Comm_split.
	EnvSplit = "SCOLL_ALGORITHM_SPLIT"
)

// configure reads the agreed configuration: the tuning rules (the file's,
// else the built-in ones), SCOLL_MPI_CHOICE and SCOLL_ALGORITHM_<COLL>
// (native, scoll, or one of scoll's algorithms, which scoll reads itself).
func configure(cfg *config) error {
	var err error
	if cfg.Tuning != nil {
		if tuned, err = tuning.Parse(cfg.Tuning); err != nil {
			return fmt.Errorf("%s=%s: %w", scoll.EnvTuning, cfg.Env[scoll.EnvTuning], err)
		}
	} else if os.Getenv(EnvTopology) != "" {
		// A described network is not the one the built-in rules were
		// measured on: the network's model chooses among scoll's
		// algorithms (a tuning file measured there still rules).
		tuned = &tuning.File{Version: tuning.Version}
	} else if tuned, err = tuning.Parse(defaultRules); err != nil {
		return fmt.Errorf("the built-in rules: %w", err)
	}
	os.Unsetenv(scoll.EnvTuning) // scoll takes the rules from NewComm
	all := byRules
	switch v := strings.ToLower(os.Getenv(EnvChoice)); v {
	case "", "tuned":
	case "scoll":
		all = forceScoll
	case "native":
		all = forceNative
	default:
		return fmt.Errorf("%w: %s=%s: want tuned, scoll or native", scoll.ErrInvalidArgument, EnvChoice, v)
	}
	// SCOLL_ALGORITHM_SPLIT names the split algorithm of MPI_Comm_split
	// and of the communicators the MPI library makes (Sack's merge or
	// cheng, Moody's bitonic, radix or hash, ...; scoll.SplitAlgorithms).
	if v := os.Getenv(EnvSplit); v != "" {
		var valid []string
		for _, a := range scoll.SplitAlgorithms() {
			valid = append(valid, a.Name)
		}
		if !slices.Contains(valid, v) {
			return fmt.Errorf("%w: %s=%s: want one of %s", scoll.ErrInvalidArgument, EnvSplit, v, strings.Join(valid, ", "))
		}
		splitOpts = []scoll.SplitOption{scoll.WithSplitAlgorithm(v)}
		os.Unsetenv(EnvSplit) // not a collective's: scoll would refuse it
	}
	for coll, name := range scollNames {
		force[coll] = all
		if name == "-" {
			continue
		}
		env := scoll.EnvAlgorithmPrefix + strings.ToUpper(name)
		switch v := os.Getenv(env); strings.ToLower(v) {
		case "":
		case tuning.Native:
			force[coll] = forceNative
			os.Unsetenv(env) // not one of scoll's algorithms
		case "scoll", "auto":
			force[coll] = forceScoll
			os.Unsetenv(env) // scoll's default choice
		default:
			force[coll], named[coll] = forceScoll, true // scoll checks the name
			if name == "reduce" && strings.EqualFold(v, "clairvoyant") {
				clairvoyantSites = true
			}
		}
	}
	return nil
}

// scollRules returns the rules of f that name scoll's algorithms (scoll's
// default choice skips the native ones anyway; nil for none).
func scollRules(f *tuning.File) *tuning.File {
	out := &tuning.File{Version: f.Version, Source: f.Source}
	for _, r := range f.Rules {
		if r.Algorithm != tuning.Native {
			out.Rules = append(out.Rules, r)
		}
	}
	if len(out.Rules) == 0 {
		return nil
	}
	return out
}

//export scollmpi_finalize
func scollmpi_finalize() {
	if file := os.Getenv(EnvReport); file != "" {
		if err := writeReport(file, ep.Rank()); err != nil {
			fmt.Fprintf(os.Stderr, "scoll: rank %d: %s: %v\n", ep.Rank(), EnvReport, err)
		}
	}
	for h, d := range comms {
		if h != 0 {
			d.c.Close()
		}
	}
	comms[0].c.Close()
	ep.Close()
}

//export scollmpi_handled
func scollmpi_handled(coll C.int) { handled[coll]++ }

//export scollmpi_reduction
func scollmpi_reduction(h, coll C.int, send, recv unsafe.Pointer, n, dt, op, root C.int, counts *C.int, ret unsafe.Pointer) C.int {
	d := comms[h]
	c := d.c
	// The C side applied the rules (dropin.c's native) but for
	// MPI_Reduce_scatter, whose size it does not count.
	if int(dt) >= len(reducers) || reducers[dt] == nil ||
		coll == C.COLL_REDUCE_SCATTER && d.native(coll, reductionBytes(coll, int(n), elemSize[dt], c.Size())) {
		return C.H_FORWARD
	}
	cs := ints(counts, c.Size())
	opts := d.options(coll, int(n), elemSize[dt])
	if coll == C.COLL_REDUCE && clairvoyantSites {
		// Named by the call, not only by the environment: scoll predicts
		// arrivals for the calls that name the clairvoyant reduce.
		var site [256]C.char
		C.dropin_site(ret, &site[0], C.int(len(site)))
		opts = []scoll.CallOption{chosenOpt, scoll.WithAlgorithm("clairvoyant"), scoll.WithCallSite(C.GoString(&site[0]))}
	}
	return result(coll, reducers[dt](c, coll, send, recv, int(n), ops[op], int(root), cs, opts))
}

// reducer runs reduction on elements of one type.
type reducer func(c *scoll.Comm, coll C.int, send, recv unsafe.Pointer, n int, op scoll.Op, root int, counts []int, opts []scoll.CallOption) error

// reducers are the reductions by DT_ type: numbers as Go's, the pair
// types of MPI_MINLOC and MPI_MAXLOC as scoll.Loc (C's struct { T value;
// int index; }).
var reducers = [...]reducer{C.DT_INT8: reduction[int8], C.DT_UINT8: reduction[uint8], C.DT_INT16: reduction[int16],
	C.DT_UINT16: reduction[uint16], C.DT_INT32: reduction[int32], C.DT_UINT32: reduction[uint32], C.DT_INT64: reduction[int64],
	C.DT_UINT64: reduction[uint64], C.DT_FLOAT32: reduction[float32], C.DT_FLOAT64: reduction[float64],
	C.DT_FLOAT_INT: reduction[scoll.Loc[float32]], C.DT_DOUBLE_INT: reduction[scoll.Loc[float64]],
	C.DT_LONG_INT: reduction[scoll.Loc[int64]], C.DT_2INT: reduction[scoll.Loc[int32]], C.DT_SHORT_INT: reduction[scoll.Loc[int16]]}

// elemSize is the size in bytes of an element of each DT_ type:
// dropin_elem_size's, read once so that calls need no call into C.
var elemSize = func() (sizes [len(reducers)]int) {
	for d := range sizes {
		sizes[d] = int(C.dropin_elem_size(C.int(d)))
	}
	return sizes
}()

// reductionBytes is the message size of a reduction of n elements of
// elem bytes on size ranks, as package tuning counts it.
func reductionBytes(coll C.int, n, elem, size int) int {
	if coll == C.COLL_REDUCE_SCATTER_BLOCK {
		return n * elem * size
	}
	return n * elem
}

// slice is the n elements of type T at p (nil for a nil p: MPI_IN_PLACE,
// or a buffer MPI does not read on this rank).
func slice[T any](p unsafe.Pointer, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

// reduction runs the reduction coll on elements of type T (a number, or
// the value-and-index pair of MPI_MINLOC and MPI_MAXLOC, laid out as C's
// struct { T value; int index; }): n elements per rank
// (MPI_Reduce_scatter_block: n per block, Size() blocks of input;
// MPI_Reduce_scatter: n in all, counts per rank). A nil send is
// MPI_IN_PLACE.
func reduction[T scoll.Element](c *scoll.Comm, coll C.int, send, recv unsafe.Pointer, n int, op scoll.Op, root int, counts []int, opts []scoll.CallOption) error {
	ctx := context.Background()
	switch coll {
	case C.COLL_ALLREDUCE:
		return scoll.Allreduce(ctx, c, slice[T](send, n), slice[T](recv, n), op, opts...)
	case C.COLL_REDUCE:
		return scoll.Reduce(ctx, c, slice[T](send, n), slice[T](recv, n), op, root, opts...)
	case C.COLL_SCAN:
		return scoll.Scan(ctx, c, slice[T](send, n), slice[T](recv, n), op, opts...)
	case C.COLL_EXSCAN:
		return scoll.Exscan(ctx, c, slice[T](send, n), slice[T](recv, n), op, opts...)
	case C.COLL_REDUCE_SCATTER_BLOCK:
		if send == nil {
			return scoll.ReduceScatterBlock(ctx, c, nil, slice[T](recv, n*c.Size()), op, opts...)
		}
		return scoll.ReduceScatterBlock(ctx, c, slice[T](send, n*c.Size()), slice[T](recv, n), op, opts...)
	case C.COLL_REDUCE_SCATTER: // n: the sum of counts
		if send == nil {
			return scoll.ReduceScatter(ctx, c, nil, slice[T](recv, n), counts, op, opts...)
		}
		return scoll.ReduceScatter(ctx, c, slice[T](send, n), slice[T](recv, counts[c.Rank()]), counts, op, opts...)
	}
	return fmt.Errorf("%w: collective %d", scoll.ErrUnsupported, coll)
}

//export scollmpi_movement
func scollmpi_movement(h, coll C.int, send, recv unsafe.Pointer, n C.int64_t, root C.int) C.int {
	ctx, d := context.Background(), comms[h]
	c := d.c
	b, p := int(n), c.Size() // bytes per block, blocks
	// The C side applied the rules (dropin.c's native).
	var err error
	switch coll {
	case C.COLL_ALLGATHER:
		err = scoll.Allgather(ctx, c, slice[byte](send, b), slice[byte](recv, b*p), d.options(coll, b, 1)...)
	case C.COLL_ALLTOALL:
		err = scoll.Alltoall(ctx, c, slice[byte](send, b*p), slice[byte](recv, b*p), d.options(coll, b, 1)...)
	case C.COLL_GATHER: // recv: the root's only; send nil: in place at the root
		err = scoll.Gather(ctx, c, slice[byte](send, b), slice[byte](recv, b*p), int(root), d.options(coll, b, 1)...)
	case C.COLL_SCATTER: // send: the root's only; recv nil: in place at the root
		err = scoll.Scatter(ctx, c, slice[byte](send, b*p), slice[byte](recv, b), int(root), d.options(coll, b, 1)...)
	default:
		return C.H_FORWARD
	}
	return result(coll, err)
}

// ints copies n C ints at p (nil for a nil p).
func ints(p *C.int, n int) []int {
	if p == nil {
		return nil
	}
	out := make([]int, n)
	for i, v := range unsafe.Slice(p, n) {
		out[i] = int(v)
	}
	return out
}

// blocks returns p byte counts and displacements from C, the length of
// the buffer they span and the mean count.
func blocks(counts, displs *C.int64_t, p int) (cs, ds []int, span, mean int) {
	cs, ds = make([]int, p), make([]int, p)
	for i := range p {
		cs[i] = int(unsafe.Slice(counts, p)[i])
		ds[i] = int(unsafe.Slice(displs, p)[i])
		span = max(span, ds[i]+cs[i])
		mean += cs[i]
	}
	return cs, ds, span, mean / max(p, 1)
}

//export scollmpi_allgatherv
func scollmpi_allgatherv(h C.int, send unsafe.Pointer, sendn C.int64_t, recv unsafe.Pointer, counts, displs *C.int64_t) C.int {
	d := comms[h]
	cs, ds, span, mean := blocks(counts, displs, d.c.Size())
	if d.native(C.COLL_ALLGATHERV, mean) {
		return C.H_FORWARD
	}
	err := scoll.Allgatherv(context.Background(), d.c, slice[byte](send, int(sendn)), slice[byte](recv, span), cs, ds, chosenOpt)
	return result(C.COLL_ALLGATHERV, err)
}

//export scollmpi_alltoallv
func scollmpi_alltoallv(h C.int, send unsafe.Pointer, scounts, sdispls *C.int64_t, recv unsafe.Pointer, rcounts, rdispls *C.int64_t) C.int {
	d := comms[h]
	sc, sd, sspan, _ := blocks(scounts, sdispls, d.c.Size())
	rc, rd, rspan, _ := blocks(rcounts, rdispls, d.c.Size())
	// No message size is alike on every rank (each knows its own counts
	// only): the rule for the smallest messages decides.
	if d.native(C.COLL_ALLTOALLV, -1) {
		return C.H_FORWARD
	}
	err := scoll.Alltoallv(context.Background(), d.c, slice[byte](send, sspan), sc, sd, slice[byte](recv, rspan), rc, rd, chosenOpt)
	return result(C.COLL_ALLTOALLV, err)
}

//export scollmpi_rootedv
func scollmpi_rootedv(h, scatter C.int, many unsafe.Pointer, counts *C.int64_t, one unsafe.Pointer, onen C.int64_t, root C.int) C.int {
	ctx, d := context.Background(), comms[h]
	c, coll := d.c, C.int(C.COLL_GATHERV)
	if scatter != 0 {
		coll = C.COLL_SCATTERV
	}
	p, me := c.Size(), c.Rank()
	// The root's byte counts and, last, its verdict: 1 to forward (a
	// negative count, or more than MPI_Pack takes).
	cs := make([]int64, p+1)
	if me == int(root) {
		if counts == nil {
			cs[p] = 1
		} else {
			copy(cs, unsafe.Slice((*int64)(unsafe.Pointer(counts)), p))
		}
	}
	if err := scoll.Bcast(ctx, c, cs, int(root)); err != nil {
		return result(coll, err)
	}
	bytes, total := make([]int, p), 0
	for i := range p {
		bytes[i] = int(cs[i])
		total += bytes[i]
	}
	if cs[p] != 0 || d.native(coll, total/p) {
		return C.H_FORWARD
	}
	// This rank's block as the root counts it; a rank that passes another
	// size takes part with a block of the root's size and fails.
	own, short := slice[byte](one, int(onen)), C.int(0)
	if one != nil && int(onen) != bytes[me] {
		own, short = make([]byte, bytes[me]), C.MPI_ERR_TRUNCATE
		if scatter == 0 {
			copy(own, slice[byte](one, int(max(onen, 0))))
		}
	}
	var err error
	if scatter == 0 {
		err = scoll.Gatherv(ctx, c, own, slice[byte](many, total), bytes, nil, int(root), chosenOpt)
	} else {
		err = scoll.Scatterv(ctx, c, slice[byte](many, total), own, bytes, nil, int(root), chosenOpt)
		if short != 0 {
			copy(slice[byte](one, int(max(onen, 0))), own)
		}
	}
	if rc := result(coll, err); rc != C.H_DONE || short == 0 {
		return rc
	}
	return short
}

//export scollmpi_bcast
func scollmpi_bcast(h C.int, buf unsafe.Pointer, n C.int64_t, root C.int) C.int {
	d := comms[h] // the C side applied the rules
	err := scoll.Bcast(context.Background(), d.c, unsafe.Slice((*byte)(buf), int(n)), int(root), d.options(C.COLL_BCAST, int(n), 1)...)
	return result(C.COLL_BCAST, err)
}

//export scollmpi_barrier
func scollmpi_barrier(h C.int) C.int {
	d := comms[h] // the C side applied the rules
	return result(C.COLL_BARRIER, scoll.Barrier(context.Background(), d.c, d.options(C.COLL_BARRIER, 0, 1)...))
}

//export scollmpi_split
func scollmpi_split(h, color, key C.int, ranks *C.int, n, handle *C.int) C.int {
	c := int(color)
	if c < 0 {
		c = scoll.Undefined
	}
	var stats scoll.SplitStats
	sub, err := comms[h].c.Split(context.Background(), c, int(key), append(splitOpts, scoll.WithSplitStats(&stats))...)
	chosen = stats.Algorithm
	return derived(h, C.COLL_SPLIT, sub, err, ranks, n, handle)
}

//export scollmpi_dup
func scollmpi_dup(h C.int) C.int {
	d, err := comms[h].c.Dup(context.Background())
	chosen = ""
	if result(C.COLL_DUP, err) != C.H_DONE {
		return -1
	}
	return register(d)
}

//export scollmpi_adopt
func scollmpi_adopt(h, coll, color, key C.int) C.int {
	c := int(color)
	if c < 0 {
		c = scoll.Undefined
	}
	var stats scoll.SplitStats
	sub, err := comms[h].c.Split(context.Background(), c, int(key), append(splitOpts, scoll.WithSplitStats(&stats))...)
	chosen = stats.Algorithm
	if result(coll, err) != C.H_DONE || sub == nil {
		return -1
	}
	return register(sub)
}

// register gives d a handle.
func register(d *scoll.Comm) C.int {
	h := nextHandle
	comms[h] = newDcomm(d)
	comms[h].publish(h)
	nextHandle++
	return h
}

// derived registers a communicator derived from comms[h] (nil: this rank
// is in none), and writes its members' ranks in comms[h] into ranks, in
// its own rank order, for the MPI side to make the same group.
func derived(h, coll C.int, d *scoll.Comm, err error, ranks *C.int, n, handle *C.int) C.int {
	*handle, *n = -1, 0
	if err != nil || d == nil {
		return result(coll, err)
	}
	all := make([]int, d.Size())
	for i := range all {
		all[i] = i
	}
	in, err := d.TranslateRanks(all, comms[h].c)
	if err != nil {
		d.Close()
		return result(coll, err)
	}
	out := unsafe.Slice(ranks, len(in))
	for i, r := range in {
		out[i] = C.int(r)
	}
	*n, *handle = C.int(len(in)), register(d)
	return result(coll, nil)
}

//export scollmpi_free
func scollmpi_free(h C.int) {
	if d := comms[h]; d != nil && h != 0 {
		d.c.Close()
		delete(comms, h)
	}
}

// result counts a handled call (and the algorithm it ran) and turns its
// error into an MPI error class (H_DONE without one).
func result(coll C.int, err error) C.int {
	handled[coll]++
	if chosen != "" {
		if algs[coll] == nil {
			algs[coll] = map[string]int{}
		}
		algs[coll][chosen]++
		chosen = ""
	}
	if err == nil {
		ep.Ended()
		return C.H_DONE
	}
	if os.Getenv(scoll.EnvVerbose) != "" {
		fmt.Fprintln(os.Stderr, err) // the error handler decides what the program sees
	}
	ep.Fail()
	return errorClass(err)
}

// errorClass is the MPI error class of one of scoll's errors.
func errorClass(err error) C.int {
	msg := err.Error()
	switch {
	case errors.Is(err, scoll.ErrInvalidArgument) && strings.Contains(msg, "root"):
		return C.MPI_ERR_ROOT
	case errors.Is(err, scoll.ErrInvalidArgument) && strings.Contains(msg, "operator"):
		return C.MPI_ERR_OP
	case errors.Is(err, scoll.ErrInvalidArgument) && (strings.Contains(msg, "count") || strings.Contains(msg, "elements")):
		return C.MPI_ERR_COUNT
	case errors.Is(err, scoll.ErrInvalidArgument):
		return C.MPI_ERR_ARG
	case errors.Is(err, scoll.ErrMismatch):
		return C.MPI_ERR_ARG // the ranks' calls disagree
	case errors.Is(err, scoll.ErrUnsupported):
		return C.MPI_ERR_UNSUPPORTED_OPERATION
	}
	return C.MPI_ERR_OTHER
}

// report is the line SCOLL_MPI_REPORT appends for a rank.
type report struct {
	Rank      int              `json:"rank"`
	Handled   int              `json:"handled"`
	Forwarded int              `json:"forwarded"`
	Calls     map[string]calls `json:"calls"`
}

// calls are one collective's calls in a report.
type calls struct {
	Handled    int            `json:"handled"`
	Forwarded  int            `json:"forwarded"`
	Algorithms map[string]int `json:"algorithms,omitempty"`
	// ForwardedBy counts the forwarded calls by reason (whyNames).
	ForwardedBy map[string]int `json:"forwarded_by,omitempty"`
}

// whyNames name the reasons a call was forwarded, in the order of
// dropin.h's WHY_ constants: a rule (the tuning rules or the environment
// chose the MPI library), a communicator scoll has none for, an
// intercommunicator, an operator or a datatype scoll does not run, a
// buffer beyond what scoll packs, arguments MPI refuses (its error).
var whyNames = [C.NUM_WHY]string(strings.Fields("rule communicator intercommunicator operator datatype size argument"))

// writeReport appends this rank's report to file (one write, so that the
// ranks' lines do not interleave).
func writeReport(file string, rank int) error {
	r := report{Rank: rank, Calls: map[string]calls{}}
	for c, n := range handled {
		cs := calls{Handled: n, Algorithms: algs[c]}
		for w, name := range whyNames {
			if f := int(C.dropin_forwarded(C.int(c), C.int(w))); f > 0 {
				if cs.ForwardedBy == nil {
					cs.ForwardedBy = map[string]int{}
				}
				cs.ForwardedBy[name] = f
				cs.Forwarded += f
			}
		}
		r.Handled += n
		r.Forwarded += cs.Forwarded
		if n+cs.Forwarded > 0 {
			r.Calls[collNames[c]] = cs
		}
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
