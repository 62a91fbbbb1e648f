//go:build linux

package shm

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scoll/scoll/internal/clock"
	"github.com/scoll/scoll/internal/errs"
)

// A segment's descriptor reaches the other processes of its host over a
// Unix socket in the abstract namespace (no file to clean up), named by an
// HMAC of the job's secret and id, and only after both ends have proved
// they know the secret:
//
//	server → client   nonce_s (32 bytes)
//	client → server   nonce_c (32 bytes), HMAC(secret, "c" ‖ nonce_s ‖ nonce_c)
//	server → client   HMAC(secret, "s" ‖ nonce_s ‖ nonce_c), with the descriptor (SCM_RIGHTS)
//
// A process of another job, or of the same job with another secret, can
// neither obtain the descriptor nor hand a client a segment of its own.

const nonceLen = 32

// SocketName returns the abstract Unix socket name of the segment server of
// job on this host.
func SocketName(secret []byte, job string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("scoll shm socket\x00"))
	m.Write([]byte(job))
	return "@scoll-" + hex.EncodeToString(m.Sum(nil)[:16])
}

func handoffMAC(secret []byte, side string, ns, nc []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(side))
	m.Write(ns)
	m.Write(nc)
	return m.Sum(nil)
}

// Listen opens the segment server's socket.
func Listen(name string) (*net.UnixListener, error) {
	return net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
}

// ServeFD hands fd to n clients that prove they know secret, one after the
// other; clients that fail the proof are dropped and do not count. It
// returns when n clients have the descriptor or ctx ends.
func ServeFD(ctx context.Context, ln *net.UnixListener, fd int, secret []byte, n int) error {
	stop := context.AfterFunc(ctx, func() { ln.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	for served := 0; served < n; {
		c, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("shm: serving the segment: %w", ctx.Err())
			}
			return fmt.Errorf("shm: serving the segment: %w", err)
		}
		if serveOne(ctx, c, fd, secret) == nil {
			served++
		}
		c.Close()
	}
	return nil
}

func serveOne(ctx context.Context, c *net.UnixConn, fd int, secret []byte) error {
	deadline(ctx, c)
	ns := make([]byte, nonceLen)
	rand.Read(ns)
	if _, err := c.Write(ns); err != nil {
		return err
	}
	msg := make([]byte, nonceLen+sha256.Size)
	if _, err := io.ReadFull(c, msg); err != nil {
		return err
	}
	nc, mac := msg[:nonceLen], msg[nonceLen:]
	if !hmac.Equal(mac, handoffMAC(secret, "c", ns, nc)) {
		return fmt.Errorf("%w: shm: a client failed the secret's proof", errs.PeerFailed)
	}
	_, _, err := c.WriteMsgUnix(handoffMAC(secret, "s", ns, nc), unix.UnixRights(fd), nil)
	return err
}

// FetchFD connects to the segment server name, proves it knows secret and
// returns the descriptor it hands over, once the server has proved it
// knows the secret too.
func FetchFD(ctx context.Context, name string, secret []byte) (int, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", name)
	if err != nil {
		return -1, fmt.Errorf("shm: connecting to the segment server: %w", err)
	}
	c := conn.(*net.UnixConn)
	defer c.Close()
	deadline(ctx, c)
	ns := make([]byte, nonceLen)
	if _, err := io.ReadFull(c, ns); err != nil {
		return -1, fmt.Errorf("shm: segment server: %w", err)
	}
	nc := make([]byte, nonceLen)
	rand.Read(nc)
	if _, err := c.Write(append(nc, handoffMAC(secret, "c", ns, nc)...)); err != nil {
		return -1, fmt.Errorf("shm: segment server: %w", err)
	}
	mac := make([]byte, sha256.Size)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := c.ReadMsgUnix(mac, oob)
	if err != nil {
		return -1, fmt.Errorf("%w: shm: the segment server refused this process (another job's secret?): %v", errs.PeerFailed, err)
	}
	var fd = -1
	if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(cmsgs) == 1 {
		if fds, err := unix.ParseUnixRights(&cmsgs[0]); err == nil && len(fds) == 1 {
			fd = fds[0]
		}
	}
	if n != len(mac) || !hmac.Equal(mac, handoffMAC(secret, "s", ns, nc)) || fd < 0 {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("%w: shm: the segment server failed the secret's proof", errs.PeerFailed)
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// handoffTimeout bounds a handoff whose context has no deadline.
const handoffTimeout = 10 * time.Second

// deadline bounds c's exchange by ctx's deadline, or handoffTimeout. The
// runtime enforces a connection's deadline in its own time, which only
// clock.Real tells (in a testing/synctest bubble too), and the handoff
// runs before any endpoint exists: it takes no other clock.
func deadline(ctx context.Context, c net.Conn) {
	d, ok := ctx.Deadline()
	if !ok {
		d = clock.Real{}.Now().Add(handoffTimeout)
	}
	c.SetDeadline(d)
}
