//go:build linux

package join

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/mixed"
	"github.com/scoll/scoll/transport/shm"
)

// HostKey is the identity of this rank's host: its name and boot id, or
// $SCOLL_HOSTNAME alone when set (so that tests can pretend to be several
// hosts).
func HostKey() ([32]byte, error) {
	if h := os.Getenv(HostnameEnv); h != "" {
		return sha256.Sum256([]byte("name\x00" + h)), nil
	}
	h, err := os.Hostname()
	if err != nil {
		return [32]byte{}, err
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return [32]byte{}, fmt.Errorf("boot id: %w", err)
	}
	return sha256.Sum256([]byte("host\x00" + h + "\x00" + strings.TrimSpace(string(boot)))), nil
}

// MachineKey is the identity of the machine (the kernel) this rank runs
// on, whatever host name it pretends: the ranks with equal keys share its
// CPUs. It is the host key when the boot id cannot be read.
func MachineKey() [32]byte {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		k, _ := HostKey()
		return k
	}
	return sha256.Sum256([]byte("machine\x00" + strings.TrimSpace(string(boot))))
}

// Config is how Host joins: the job's secret and id, whether shared
// memory is required, and (for tests, nil: the real ones) how the host's
// segment is made, how a rank joins it and what a rank's host is.
type Config struct {
	Secret   []byte
	Job      string
	Required bool

	CreateSegment func(name string, size int) (*shm.Segment, error)
	NewEndpoint   func(seg *shm.Segment, rank, size int, c shm.Config) (*shm.Transport, error)
	HostKey       func(rank int) ([32]byte, error)
}

// defaults fills in the real functions for the nil ones.
func (c *Config) defaults() {
	if c.CreateSegment == nil {
		c.CreateSegment = shm.CreateSegment
	}
	if c.NewEndpoint == nil {
		c.NewEndpoint = shm.New
	}
	if c.HostKey == nil {
		c.HostKey = func(int) ([32]byte, error) { return HostKey() }
	}
}

// bootstrapComm is the communicator id of the messages that tell the ranks
// each other's host, sent before any communicator exists.
const bootstrapComm = 0xfffffffffffffff1

// Message tags of the bootstrap: hosts, the segment maker's status, every
// host rank's status.
const (
	tagHosts   = 1
	tagSegment = 2
	tagJoined  = 3
)

// Host finds the ranks of net's job on this host and, when there are
// several, returns an endpoint that reaches them through a shared-memory
// segment and the others through net; else an endpoint over net alone.
// Either reports every rank's host (transport.Noder). Every rank of the
// job calls it. The host's lowest rank makes the segment and hands it to
// the others over an authenticated Unix socket (package shm).
//
// The host's ranks agree, over net, on whether they use the segment: when
// one of them cannot (no memfd, no mapping, no host identity), all of them
// fall back to net, so that no rank sends to a segment another does not
// read. With cfg.Required set (SCOLL_TRANSPORT=shm) they fail instead.
func Host(ctx context.Context, net mixed.Net, cfg Config) (transport.Transport, error) {
	cfg.defaults()
	secret, job, required := cfg.Secret, cfg.Job, cfg.Required
	me, err := cfg.HostKey(net.Rank())
	if err != nil {
		if required {
			return nil, fmt.Errorf("%w: shared memory: no host identity (%v); set %s or SCOLL_TRANSPORT=tcp", errs.Unsupported, err, HostnameEnv)
		}
		// A host of its own: the others reach this rank over net.
		me = sha256.Sum256(fmt.Appendf(nil, "rank\x00%d\x00%v", net.Rank(), err))
	}
	keys, machines, err := exchangeHosts(ctx, net, me, MachineKey())
	if err != nil {
		return nil, err
	}
	var local []int
	sameMachine := 0
	for r, k := range keys {
		if k == me {
			local = append(local, r)
		}
		if machines[r] == machines[net.Rank()] {
			sameMachine++
		}
	}
	// Every rank learns every rank's host, whether or not its own host's
	// ranks share memory: the algorithm choice depends on it, alike on
	// every rank.
	nodes := nodesOf(keys)
	overNet := func() (transport.Transport, error) {
		mt := mixed.New(net, nil)
		mt.SetNodes(nodes)
		return mt, nil
	}
	if len(local) == 1 {
		return overNet()
	}
	idx := slices.Index(local, net.Rank())
	segSize := shm.SegmentSize(len(local), 64<<10)
	name := shm.SocketName(secret, job+"\x00"+hex.EncodeToString(me[:]))
	fail := func(err error) (transport.Transport, error) {
		if required {
			return nil, fmt.Errorf("shared memory: %w", err)
		}
		return overNet()
	}

	// The lowest rank makes the segment and tells the others whether it
	// did; they fetch it only then.
	var seg *shm.Segment
	var serveErr chan error
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	var segErr error
	if idx == 0 {
		if seg, segErr = cfg.CreateSegment("job", segSize); segErr == nil {
			ln, err := shm.Listen(name)
			if err != nil {
				seg.Close()
				seg, segErr = nil, fmt.Errorf("segment server: %w", err)
			} else {
				serveErr = make(chan error, 1)
				go func() {
					serveErr <- shm.ServeFD(serveCtx, ln, seg.FD(), secret, len(local)-1)
					ln.Close()
				}()
			}
		}
	}
	ok, leaderErr, err := agreeHost(ctx, net, local, tagSegment, idx != 0 || segErr == nil)
	if err != nil {
		if seg != nil {
			seg.Close()
		}
		return nil, err
	}
	if !ok {
		if segErr == nil {
			segErr = fmt.Errorf("rank %d could not make the host's segment%s", local[0], leaderErr)
		}
		if seg != nil {
			seg.Close()
		}
		return fail(segErr)
	}
	var joinErr error
	if idx != 0 {
		seg, joinErr = fetchSegment(ctx, name, secret, segSize)
	}
	var ep *shm.Transport
	if joinErr == nil {
		c := shm.Config{Ranks: local, JobSize: net.Size(), MachineRanks: sameMachine}
		if len(local) < net.Size() {
			// Some messages come over the network: the progress
			// goroutine must sleep where their readers wake.
			c.BellSocket = name + "-bell"
		}
		ep, joinErr = cfg.NewEndpoint(seg, idx, len(local), c)
		if joinErr != nil {
			seg.Close()
		}
	}
	// Every rank of the host says whether it joined.
	ok, _, err = agreeHost(ctx, net, local, tagJoined, joinErr == nil)
	if idx == 0 && ok {
		if serr := <-serveErr; serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil || !ok {
		if ep != nil {
			ep.Close()
		}
		if err != nil {
			return nil, err
		}
		if joinErr == nil {
			joinErr = errors.New("another rank of the host could not join its segment")
		}
		return fail(joinErr)
	}
	mt := mixed.New(net, ep)
	mt.SetNodes(nodes)
	return mt, nil
}

// nodesOf numbers the hosts of keys (one per rank) in the order of their
// lowest ranks and returns each rank's number.
func nodesOf(keys [][32]byte) []int {
	num := map[[32]byte]int{}
	nodes := make([]int, len(keys))
	for r, k := range keys {
		n, ok := num[k]
		if !ok {
			n = len(num)
			num[k] = n
		}
		nodes[r] = n
	}
	return nodes
}

// fetchSegment gets the host's segment from its maker, retrying while the
// maker's server is not up yet.
func fetchSegment(ctx context.Context, name string, secret []byte, size int) (*shm.Segment, error) {
	for {
		fd, err := shm.FetchFD(ctx, name, secret)
		if err == nil {
			return shm.AttachSegment(fd, size)
		}
		if errors.Is(err, errs.PeerFailed) || ctx.Err() != nil {
			return nil, err
		}
		time.Sleep(5 * time.Millisecond) // the server is not up yet
	}
}

// agreeHost tells every other rank of local (the host's ranks) whether
// this rank is ok, hears theirs, and reports whether all are; why names
// the first that is not, for messages.
func agreeHost(ctx context.Context, net transport.Transport, local []int, tag int64, ok bool) (all bool, why string, err error) {
	mine := []byte{0}
	if ok {
		mine[0] = 1
	}
	theirs, err := swap(ctx, net, local, tag, mine)
	if err != nil {
		return false, "", fmt.Errorf("host agreement: %w", err)
	}
	all = ok
	for i, b := range theirs {
		if b != nil && b[0] != 1 {
			if all {
				why = fmt.Sprintf(" (rank %d)", local[i])
			}
			all = false
		}
	}
	return all, why, nil
}

// exchangeHosts tells every rank of net's job this rank's host key and
// returns every rank's.
func exchangeHosts(ctx context.Context, net transport.Transport, me, machine [32]byte) (hosts, machines [][32]byte, err error) {
	all := make([]int, net.Size())
	for r := range all {
		all[r] = r
	}
	mine := append(me[:], machine[:]...)
	got, err := swap(ctx, net, all, tagHosts, mine)
	if err != nil {
		return nil, nil, fmt.Errorf("host exchange: %w", err)
	}
	hosts = make([][32]byte, len(all))
	machines = make([][32]byte, len(all))
	for r, b := range got {
		if b == nil {
			b = mine
		}
		copy(hosts[r][:], b)
		copy(machines[r][:], b[32:])
	}
	return hosts, machines, nil
}

// swap sends mine to every rank of peers but this one, on the bootstrap
// communicator with tag, and returns what each sent (as many bytes as
// mine; nil for this rank), indexed like peers.
func swap(ctx context.Context, net transport.Transport, peers []int, tag int64, mine []byte) ([][]byte, error) {
	w := transport.NewWaiter(0)
	key := transport.Key{Comm: bootstrapComm, Tag: tag}
	theirs := make([][]byte, len(peers))
	var msgs []*transport.Msg
	for i, r := range peers {
		if r == net.Rank() {
			continue
		}
		theirs[i] = make([]byte, len(mine))
		recv := &transport.Msg{Peer: r, Key: key, Buf: theirs[i], W: w}
		send := &transport.Msg{Peer: r, Key: key, Buf: mine, W: w, Eager: true}
		if err := transport.Post(net, recv, false); err != nil {
			return nil, err
		}
		if err := transport.Post(net, send, true); err != nil {
			return nil, err
		}
		msgs = append(msgs, recv, send)
	}
	if err := w.Wait(ctx); err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if m.Err != nil {
			return nil, m.Err
		}
	}
	return theirs, nil
}
