// Command genapi writes api.go: the blocking, non-blocking (I*) and
// persistent (*Init) forms of every collective, each a thin wrapper that
// hands the collective's arguments to prepare (prep.go). Run it with go
// generate in the repository root.
package main

import (
	"bytes"
	"go/format"
	"log"
	"os"
	"text/template"
)

// coll is one collective: its name, parameter list, argument list and doc.
type coll struct {
	name, params, args, doc string
}

// prepArgs are the arguments each collective passes to prepare after the
// communicator: its plan.Args, its buffers and its operator.
var prepArgs = map[string]string{
	"Bcast":              "plan.Args{Coll: schedule.Bcast, Root: root}, nil, buf, Op{}",
	"Reduce":             "plan.Args{Coll: schedule.Reduce, Root: root}, send, recv, op",
	"Allreduce":          "plan.Args{Coll: schedule.Allreduce}, send, recv, op",
	"Scan":               "plan.Args{Coll: schedule.Scan}, send, recv, op",
	"Exscan":             "plan.Args{Coll: schedule.Exscan}, send, recv, op",
	"Gather":             "plan.Args{Coll: schedule.Gather, Root: root}, send, recv, Op{}",
	"Scatter":            "plan.Args{Coll: schedule.Scatter, Root: root}, send, recv, Op{}",
	"Allgather":          "plan.Args{Coll: schedule.Allgather}, send, recv, Op{}",
	"Alltoall":           "plan.Args{Coll: schedule.Alltoall}, send, recv, Op{}",
	"ReduceScatterBlock": "plan.Args{Coll: schedule.ReduceScatterBlock}, send, recv, op",
	"Gatherv":            "plan.Args{Coll: schedule.Gatherv, Root: root, Counts: counts, Displs: displs}, send, recv, Op{}",
	"Allgatherv":         "plan.Args{Coll: schedule.Allgatherv, Counts: counts, Displs: displs}, send, recv, Op{}",
	"Scatterv":           "plan.Args{Coll: schedule.Scatterv, Root: root, Counts: counts, Displs: displs}, send, recv, Op{}",
	"Alltoallv":          "plan.Args{Coll: schedule.Alltoallv, Counts: sendCounts, Displs: sendDispls, RecvCounts: recvCounts, RecvDispls: recvDispls}, send, recv, Op{}",
	"ReduceScatter":      "plan.Args{Coll: schedule.ReduceScatter, Counts: counts}, send, recv, op",
	"Barrier":            "plan.Args{Coll: schedule.Barrier}, nil, nil, Op{}",
}

var colls = []coll{
	{"Bcast", "buf []T, root int", "buf, root",
		"broadcasts buf from root to every rank. buf has the same length on every rank."},
	{"Reduce", "send, recv []T, op Op, root int", "send, recv, op, root",
		"combines the send buffers of all ranks with op into recv at root. recv is ignored on other ranks (may be nil). send == nil at root means in place: root's input is in recv."},
	{"Allreduce", "send, recv []T, op Op", "send, recv, op",
		"combines the send buffers of all ranks with op into recv on every rank. len(recv) == len(send); send == nil means in place: the input is in recv."},
	{"Gather", "send, recv []T, root int", "send, recv, root",
		"collects every rank's send buffer into recv at root, rank i's block at recv[i*n:(i+1)*n] for n = len(send). recv is ignored on other ranks. send == nil at root means in place: root's block is already in recv."},
	{"Scatter", "send, recv []T, root int", "send, recv, root",
		"sends block i of root's send buffer (of length Size()*len(recv)) to rank i's recv. send is ignored on other ranks. recv == nil at root means in place: root's block stays in send."},
	{"Allgather", "send, recv []T", "send, recv",
		"collects every rank's send buffer into recv on every rank; len(recv) == Size()*len(send). send == nil means in place: the rank's block is already at recv[Rank()*n:]."},
	{"Alltoall", "send, recv []T", "send, recv",
		"sends block j of send to rank j and receives block i of recv from rank i; len(send) == len(recv) == Size()*n. send == nil means in place: the blocks to send are in recv and are replaced."},
	{"ReduceScatterBlock", "send, recv []T, op Op", "send, recv, op",
		"combines the send buffers of all ranks with op and leaves block i of the result (of length len(recv)) on rank i; len(send) == Size()*len(recv). send == nil means in place: the input is in recv (of length Size()*n) and the result goes to recv[:n]."},
	{"Scan", "send, recv []T, op Op", "send, recv, op",
		"sets recv on rank r to the combination of the send buffers of ranks 0..r (inclusive prefix). send == nil means in place."},
	{"Exscan", "send, recv []T, op Op", "send, recv, op",
		"sets recv on rank r > 0 to the combination of the send buffers of ranks 0..r-1 (exclusive prefix); rank 0's recv is left unchanged. send == nil means in place."},
	{"Gatherv", "send, recv []T, counts, displs []int, root int", "send, recv, counts, displs, root",
		"collects rank i's send buffer (counts[i] elements) into recv at root at offset displs[i] (nil displs: packed). counts and displs must be the same on every rank. recv is ignored on other ranks. send == nil at root means in place."},
	{"Scatterv", "send, recv []T, counts, displs []int, root int", "send, recv, counts, displs, root",
		"sends counts[i] elements at send[displs[i]:] (nil displs: packed) from root to rank i's recv. counts and displs must be the same on every rank. recv == nil at root means in place."},
	{"Allgatherv", "send, recv []T, counts, displs []int", "send, recv, counts, displs",
		"collects rank i's send buffer (counts[i] elements) into recv at offset displs[i] (nil displs: packed) on every rank. send == nil means in place: the rank's block is already in recv."},
	{"Alltoallv", "send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int", "send, sendCounts, sendDispls, recv, recvCounts, recvDispls",
		"sends sendCounts[j] elements at send[sendDispls[j]:] to rank j and receives recvCounts[i] elements from rank i at recv[recvDispls[i]:] (nil displacements: packed). In-place use is not supported."},
	{"ReduceScatter", "send, recv []T, counts []int, op Op", "send, recv, counts, op",
		"combines the send buffers (of length sum(counts)) of all ranks with op and leaves the block of counts[i] elements at the packed offset of rank i in rank i's recv. send == nil means in place: the input is in recv and the result goes to its start."},
}

// form is the three forms of a call, from its forms.
var form = template.Must(template.New("form").Parse(`
// {{.Name}} {{.Doc}}
func {{.Name}}{{.TypeParams}}(ctx context.Context, c *Comm, {{.Params}}opts ...CallOption) error {
	var cl comm.Call
	err := prepare{{.Elem}}(&cl, ctx, c, {{.Prep}}, true, opts)
	return blocking(ctx, c, &cl, err)
}

// I{{.Name}} {{.IDoc}}
func I{{.Name}}{{.TypeParams}}(ctx context.Context, c *Comm, {{.Params}}opts ...CallOption) (*Request, error) {
	cl := newCall()
	return nonblocking(ctx, c, cl, prepare{{.Elem}}(cl, ctx, c, {{.Prep}}, false, opts))
}

// {{.Name}}Init {{.InitDoc}}
func {{.Name}}Init{{.TypeParams}}(ctx context.Context, c *Comm, {{.Params}}opts ...CallOption) (*Persistent, error) {
	cl := newCall()
	return persistent(c, cl, prepare{{.Elem}}(cl, ctx, c, {{.Prep}}, false, opts))
}
`))

// forms is what form needs of a call: its name, type parameters,
// parameters and arguments (the last two ending in ", " unless empty),
// and the docs of its three forms after their names.
type forms struct {
	Name, TypeParams, Params, Args string
	Doc, IDoc, InitDoc             string
	Prep, Elem                     string // prepare's arguments and type argument
}

// formsOf returns the forms of collective c: generic over the element
// type, with its buffers.
func formsOf(c coll) forms {
	f := forms{Name: c.name, TypeParams: "[T Element]", Params: c.params + ", ", Args: c.args + ", ", Prep: prepArgs[c.name],
		Doc:     c.doc + "\n// It returns when this rank's part is done and its buffers may be reused.",
		IDoc:    "starts " + c.name + " without waiting; the buffers must not be touched until\n// the Request completes. ctx bounds the whole collective.",
		InitDoc: "prepares a persistent " + c.name + " on these buffers; each Start runs it."}
	return f
}

// barrier is the one call without buffers.
var barrier = forms{Name: "Barrier", Prep: prepArgs["Barrier"], Elem: "[byte]", Doc: "returns once every rank of c has entered it.",
	IDoc: "starts a barrier without waiting.", InitDoc: "prepares a persistent barrier."}

func main() {
	src, err := generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("api.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// generate returns the source of api.go.
func generate() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/genapi; DO NOT EDIT.\n")
	b.WriteString("// Every call's three forms repeat one template: alike by design.\n\npackage scoll\n\nimport (\n\t\"context\"\n\n\t\"github.com/scoll/scoll/internal/comm\"\n\t\"github.com/scoll/scoll/internal/plan\"\n\t\"github.com/scoll/scoll/schedule\"\n)\n")
	for _, c := range colls {
		if err := form.Execute(&b, formsOf(c)); err != nil {
			return nil, err
		}
	}
	if err := form.Execute(&b, barrier); err != nil {
		return nil, err
	}
	return format.Source(b.Bytes())
}
