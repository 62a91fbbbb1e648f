//go:build linux

package scoll

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/mixed"
	"github.com/scoll/scoll/transport/shm"
)

// hostKey is the identity of this rank's host: its name and boot id, or
// $SCOLL_HOSTNAME alone when set (so that tests can pretend to be several
// hosts).
func hostKey() ([32]byte, error) {
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

// bootstrapComm is the communicator id of the messages that tell the ranks
// each other's host, sent before any communicator exists.
const bootstrapComm = 0xfffffffffffffff1

// joinHost finds the ranks of net's job on this host and, when there are
// several, returns an endpoint that reaches them through a shared-memory
// segment and the others through net; else net itself. Every rank of the
// job calls it. The host's lowest rank makes the segment and hands it to
// the others over an authenticated Unix socket (package shm).
func joinHost(ctx context.Context, net mixed.Net, secret []byte, job string) (transport.Transport, error) {
	me, err := hostKey()
	if err != nil {
		return nil, fmt.Errorf("%w: shared memory: no host identity (%v); set %s or SCOLL_TRANSPORT=tcp", ErrUnsupported, err, HostnameEnv)
	}
	keys, err := exchangeHosts(ctx, net, me)
	if err != nil {
		return nil, err
	}
	var local []int
	for r, k := range keys {
		if k == me {
			local = append(local, r)
		}
	}
	if len(local) == 1 {
		return net, nil
	}
	idx := 0
	for i, r := range local {
		if r == net.Rank() {
			idx = i
		}
	}
	cfg := shm.Config{Ranks: local, JobSize: net.Size()}
	name := shm.SocketName(secret, job+"\x00"+hex.EncodeToString(me[:]))
	var seg *shm.Segment
	if idx == 0 {
		if seg, err = shm.CreateSegment("job", shm.SegmentSize(len(local), 64<<10)); err != nil {
			return nil, fmt.Errorf("shared memory: %w", err)
		}
		ln, err := shm.Listen(name)
		if err != nil {
			seg.Close()
			return nil, fmt.Errorf("shared memory: segment server: %w", err)
		}
		err = shm.ServeFD(ctx, ln, seg.FD(), secret, len(local)-1)
		ln.Close()
		if err != nil {
			seg.Close()
			return nil, err
		}
	} else {
		fd := -1
		for fd < 0 {
			if fd, err = shm.FetchFD(ctx, name, secret); err != nil {
				if errors.Is(err, ErrPeerFailed) || ctx.Err() != nil {
					return nil, fmt.Errorf("shared memory: %w", err)
				}
				time.Sleep(5 * time.Millisecond) // the server is not up yet
			}
		}
		if seg, err = shm.AttachSegment(fd, shm.SegmentSize(len(local), 64<<10)); err != nil {
			return nil, fmt.Errorf("shared memory: %w", err)
		}
	}
	ep, err := shm.New(seg, idx, len(local), cfg)
	if err != nil {
		seg.Close()
		return nil, err
	}
	return mixed.New(net, ep), nil
}

// exchangeHosts tells every rank of net's job this rank's host key and
// returns every rank's.
func exchangeHosts(ctx context.Context, net transport.Transport, me [32]byte) ([][32]byte, error) {
	n, rank := net.Size(), net.Rank()
	keys := make([][32]byte, n)
	keys[rank] = me
	w := transport.NewWaiter(0)
	key := transport.Key{Comm: bootstrapComm, Tag: 1}
	msgs := make([]*transport.Msg, 0, 2*n)
	bufs := make([][]byte, n)
	for r := range n {
		if r == rank {
			continue
		}
		bufs[r] = make([]byte, 32)
		recv := &transport.Msg{Peer: r, Key: key, Buf: bufs[r], W: w}
		send := &transport.Msg{Peer: r, Key: key, Buf: me[:], W: w, Eager: true}
		if err := transport.Post(net, recv, false); err != nil {
			return nil, err
		}
		if err := transport.Post(net, send, true); err != nil {
			return nil, err
		}
		msgs = append(msgs, recv, send)
	}
	if err := w.Wait(ctx); err != nil {
		return nil, fmt.Errorf("host exchange: %w", err)
	}
	for _, m := range msgs {
		if m.Err != nil {
			return nil, fmt.Errorf("host exchange: %w", m.Err)
		}
	}
	for r := range n {
		if r != rank {
			copy(keys[r][:], bufs[r])
		}
	}
	return keys, nil
}
