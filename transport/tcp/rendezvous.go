package tcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scoll/scoll/internal/clock"
	"github.com/scoll/scoll/internal/errs"
)

// Rendezvous tells the ranks of a job each other's listening addresses.
type Rendezvous interface {
	// Exchange publishes this rank's address — a host the other ranks
	// can reach it at, with port — and returns every rank's as host:port,
	// indexed by rank.
	Exchange(ctx context.Context, rank, size int, port string) ([]string, error)
}

// ParseRendezvous parses a rendezvous spec: "tcp:host:port" (rank 0 serves
// it on port, the others connect to host:port) or "file:/dir" (each rank
// writes its address into a file of a directory every rank can read, such
// as a shared file system). Every message is authenticated with secret; job
// names the job so that files of another job in the same directory are
// ignored (may be empty).
func ParseRendezvous(spec string, secret []byte, job string) (Rendezvous, error) {
	kind, rest, ok := strings.Cut(spec, ":")
	switch {
	case ok && kind == "tcp":
		host, port, err := net.SplitHostPort(rest)
		if err != nil || port == "" {
			return nil, fmt.Errorf("%w: rendezvous %q: want tcp:host:port", errs.InvalidArgument, spec)
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, fmt.Errorf("%w: rendezvous %q: bad port", errs.InvalidArgument, spec)
		}
		return &tcpRendezvous{host: host, port: port, secret: secret, clk: clock.Real{}, network: tcpNetwork{}}, nil
	case ok && kind == "file" && rest != "":
		return &fileRendezvous{dir: rest, secret: secret, job: job, clk: clock.Real{}}, nil
	}
	return nil, fmt.Errorf("%w: rendezvous %q: want tcp:host:port or file:/dir", errs.InvalidArgument, spec)
}

// Limits of rendezvous messages, checked before anything is allocated.
const (
	maxAddrLen  = 255
	maxRVRanks  = 1 << 20
	rvMagic     = "SCLR"
	rvPollEvery = 20 * time.Millisecond
	rvTimeout   = 10 * time.Second // for rank 0's exchange with one joining rank
)

func addrMAC(secret []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, secret)
	for _, p := range parts {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(p)))
		m.Write(n[:])
		m.Write(p)
	}
	return m.Sum(nil)
}

func u32(x int) []byte {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(x))
	return b[:]
}

// fileRendezvous: rank r writes dir/rank-r (atomically, by rename) holding
// its address and a MAC over job, size, rank and address.
type fileRendezvous struct {
	dir    string
	secret []byte
	job    string
	clk    clock.Clock // times the polls of the directory
}

// Exchange publishes localHost():port.
func (f *fileRendezvous) Exchange(ctx context.Context, rank, size int, port string) ([]string, error) {
	addr := net.JoinHostPort(localHost(), port)
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return nil, fmt.Errorf("rendezvous directory: %w", err)
	}
	mac := addrMAC(f.secret, []byte(f.job), u32(size), u32(rank), []byte(addr))
	content := fmt.Sprintf("scoll-rendezvous 1\njob %s\nsize %d\nrank %d\naddr %s\nmac %x\n", f.job, size, rank, addr, mac)
	tmp, err := os.CreateTemp(f.dir, ".rank-*")
	if err != nil {
		return nil, fmt.Errorf("rendezvous: %w", err)
	}
	_, err = tmp.WriteString(content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(f.dir, fmt.Sprintf("rank-%d", rank)))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("rendezvous: %w", err)
	}
	addrs := make([]string, size)
	for {
		missing := 0
		for r := range size {
			if addrs[r] == "" {
				addrs[r] = f.read(r, size)
				if addrs[r] == "" {
					missing++
				}
			}
		}
		if missing == 0 {
			return addrs, nil
		}
		if !clock.Sleep(f.clk, rvPollEvery, ctx.Done()) {
			var ms []string
			for r, a := range addrs {
				if a == "" && len(ms) < 8 {
					ms = append(ms, strconv.Itoa(r))
				}
			}
			return nil, fmt.Errorf("%w: rendezvous in %s: %d of %d ranks never arrived (ranks %s...): %w", errs.PeerFailed, f.dir, missing, size, strings.Join(ms, ","), context.Cause(ctx))
		}
	}
}

// Finish removes this rank's file once every rank has read it (Start calls
// it when all connections are up). The last rank to finish also removes
// the shared secret and, for a directory scoll made under os.TempDir(), the
// directory.
func (f *fileRendezvous) Finish(rank int) {
	os.Remove(filepath.Join(f.dir, fmt.Sprintf("rank-%d", rank)))
	left, _ := filepath.Glob(filepath.Join(f.dir, "rank-*"))
	if len(left) > 0 {
		return
	}
	os.Remove(filepath.Join(f.dir, "secret"))
	if filepath.Dir(filepath.Clean(f.dir)) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(f.dir), "scoll-") {
		os.Remove(f.dir) // only when empty
	}
}

// read returns rank r's address, or "" when its file is missing, belongs to
// another job or fails its MAC.
func (f *fileRendezvous) read(r, size int) string {
	fh, err := os.Open(filepath.Join(f.dir, fmt.Sprintf("rank-%d", r)))
	if err != nil {
		return ""
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, 4096))
	if err != nil {
		return ""
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		fields[k] = v
	}
	if fields["scoll-rendezvous"] != "1" || fields["job"] != f.job || fields["size"] != strconv.Itoa(size) || fields["rank"] != strconv.Itoa(r) {
		return ""
	}
	addr := fields["addr"]
	mac, err := hex.DecodeString(fields["mac"])
	if err != nil || len(addr) > maxAddrLen || !hmac.Equal(mac, addrMAC(f.secret, []byte(f.job), u32(size), u32(r), []byte(addr))) {
		return ""
	}
	return addr
}

// tcpRendezvous: rank 0 listens on port; every other rank connects to
// host:port, proves the secret and sends its address; rank 0 answers each
// with the table of all addresses, authenticated for that rank.
type tcpRendezvous struct {
	host, port string
	secret     []byte
	clk        clock.Clock // times retries and deadlines
	network    network     // listens and dials (TCP; in-memory in tests)
}

// dialRetry dials addr until it answers or ctx ends, waiting longer after
// every failed attempt (rank 0 may not listen yet).
func (tr *tcpRendezvous) dialRetry(ctx context.Context, addr string) (net.Conn, error) {
	backoff := 10 * time.Millisecond
	for {
		conn, err := tr.network.Dial(ctx, addr, time.Time{})
		if err == nil {
			return conn, nil
		}
		if !clock.Sleep(tr.clk, backoff, ctx.Done()) {
			return nil, fmt.Errorf("%w: rendezvous %s: %v (%w)", errs.PeerFailed, addr, err, context.Cause(ctx))
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// Exchange publishes, for rank 0, the rendezvous host with port, and for
// the others the IP of their interface that reaches rank 0 (SCOLL_HOST
// overrides both).
func (tr *tcpRendezvous) Exchange(ctx context.Context, rank, size int, port string) ([]string, error) {
	if rank == 0 {
		host := tr.host
		if h := os.Getenv("SCOLL_HOST"); h != "" {
			host = h
		}
		return tr.serve(ctx, size, net.JoinHostPort(host, port))
	}
	conn, err := tr.dialRetry(ctx, net.JoinHostPort(tr.host, tr.port))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	host := conn.LocalAddr().(*net.TCPAddr).IP.String()
	if h := os.Getenv("SCOLL_HOST"); h != "" {
		host = h
	}
	addr := net.JoinHostPort(host, port)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(tr.clk.Now()) })
	defer stop()
	return rvJoin(conn, tr.secret, rank, size, addr)
}

// rvJoin is a joining rank's side: read rank 0's nonce, send the join,
// read the table.
func rvJoin(conn net.Conn, secret []byte, rank, size int, addr string) ([]string, error) {
	if len(addr) > maxAddrLen {
		return nil, fmt.Errorf("%w: address %q too long", errs.InvalidArgument, addr)
	}
	var nonceS [nonceLen]byte
	if _, err := io.ReadFull(conn, nonceS[:]); err != nil {
		return nil, fmt.Errorf("%w: rendezvous: %v", errs.PeerFailed, err)
	}
	var nonceC [nonceLen]byte
	rand.Read(nonceC[:])
	var msg bytes.Buffer
	msg.WriteString(rvMagic)
	msg.Write(u32(size))
	msg.Write(u32(rank))
	msg.WriteByte(byte(len(addr)))
	msg.WriteString(addr)
	msg.Write(nonceC[:])
	msg.Write(addrMAC(secret, []byte("join"), nonceS[:], u32(size), u32(rank), []byte(addr), nonceC[:]))
	if _, err := conn.Write(msg.Bytes()); err != nil {
		return nil, fmt.Errorf("%w: rendezvous: %v", errs.PeerFailed, err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: rendezvous: rank 0 refused this rank (wrong secret or size?): %v", errs.PeerFailed, err)
	}
	if n := binary.LittleEndian.Uint32(hdr[:]); n != uint32(size) {
		return nil, fmt.Errorf("%w: rendezvous: rank 0 sent %d addresses for %d ranks", errs.PeerFailed, n, size)
	}
	addrs := make([]string, size)
	var table bytes.Buffer
	for r := range addrs {
		var l [1]byte
		if _, err := io.ReadFull(conn, l[:]); err != nil {
			return nil, fmt.Errorf("%w: rendezvous: %v", errs.PeerFailed, err)
		}
		b := make([]byte, l[0])
		if _, err := io.ReadFull(conn, b); err != nil {
			return nil, fmt.Errorf("%w: rendezvous: %v", errs.PeerFailed, err)
		}
		addrs[r] = string(b)
		table.WriteByte(l[0])
		table.Write(b)
	}
	mac := make([]byte, macLen)
	if _, err := io.ReadFull(conn, mac); err != nil {
		return nil, fmt.Errorf("%w: rendezvous: %v", errs.PeerFailed, err)
	}
	if !hmac.Equal(mac, addrMAC(secret, []byte("table"), nonceC[:], table.Bytes())) {
		return nil, fmt.Errorf("%w: rendezvous: the server does not know the job's secret", errs.PeerFailed)
	}
	return addrs, nil
}

type rvJoiner struct {
	conn   net.Conn
	nonceC []byte
}

// serve is rank 0's side: accept joins until every rank has joined, then
// send each the table.
func (tr *tcpRendezvous) serve(ctx context.Context, size int, addr string) ([]string, error) {
	addrs := make([]string, size)
	addrs[0] = addr
	if size == 1 {
		return addrs, nil
	}
	ln, err := tr.network.Listen(":" + tr.port)
	if err != nil {
		return nil, fmt.Errorf("rendezvous: rank 0 cannot listen on port %s: %w", tr.port, err)
	}
	joined := make([]*rvJoiner, size)
	var mu sync.Mutex
	count := 1
	all := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rank, a, nonceC, err := rvAccept(conn, tr.secret, size, tr.clk.Now().Add(rvTimeout))
				if err != nil {
					slog.Warn("scoll: rendezvous rejected a connection", "remote", conn.RemoteAddr().String(), "err", err)
					conn.Close()
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if joined[rank] != nil || count == size {
					conn.Close()
					return
				}
				joined[rank] = &rvJoiner{conn: conn, nonceC: nonceC}
				addrs[rank] = a
				count++
				if count == size {
					close(all)
				}
			}()
		}
	}()
	select {
	case <-all:
	case <-ctx.Done():
	}
	ln.Close()
	wg.Wait()
	if count < size {
		for _, j := range joined {
			if j != nil {
				j.conn.Close()
			}
		}
		return nil, fmt.Errorf("%w: rendezvous: %d of %d ranks joined: %w", errs.PeerFailed, count, size, context.Cause(ctx))
	}
	var table bytes.Buffer
	for _, a := range addrs {
		table.WriteByte(byte(len(a)))
		table.WriteString(a)
	}
	var werr error
	for _, j := range joined[1:] {
		var msg bytes.Buffer
		msg.Write(u32(size))
		msg.Write(table.Bytes())
		msg.Write(addrMAC(tr.secret, []byte("table"), j.nonceC, table.Bytes()))
		j.conn.SetWriteDeadline(tr.clk.Now().Add(rvTimeout))
		if _, err := j.conn.Write(msg.Bytes()); err != nil && werr == nil {
			werr = fmt.Errorf("%w: rendezvous: %v", errs.PeerFailed, err)
		}
		j.conn.Close()
	}
	return addrs, werr
}

// rvAccept reads and checks one join by deadline. Every length is bounded
// before anything is allocated.
func rvAccept(conn net.Conn, secret []byte, size int, deadline time.Time) (int, string, []byte, error) {
	conn.SetDeadline(deadline)
	var nonceS [nonceLen]byte
	rand.Read(nonceS[:])
	if _, err := conn.Write(nonceS[:]); err != nil {
		return 0, "", nil, err
	}
	var head [4 + 4 + 4 + 1]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return 0, "", nil, err
	}
	if string(head[:4]) != rvMagic {
		return 0, "", nil, errors.New("not a scoll rendezvous join")
	}
	s := int(binary.LittleEndian.Uint32(head[4:]))
	r := int(binary.LittleEndian.Uint32(head[8:]))
	if s != size || r <= 0 || r >= size {
		return 0, "", nil, fmt.Errorf("join of rank %d of %d, job has %d ranks", r, s, size)
	}
	rest := make([]byte, int(head[12])+nonceLen+macLen)
	if _, err := io.ReadFull(conn, rest); err != nil {
		return 0, "", nil, err
	}
	addr := rest[:head[12]]
	nonceC := rest[head[12] : int(head[12])+nonceLen]
	mac := rest[int(head[12])+nonceLen:]
	if !hmac.Equal(mac, addrMAC(secret, []byte("join"), nonceS[:], u32(s), u32(r), addr, nonceC)) {
		return 0, "", nil, fmt.Errorf("join claiming rank %d does not know the job's secret", r)
	}
	conn.SetDeadline(time.Time{})
	return r, string(addr), nonceC, nil
}

// localHost picks the address other hosts can reach this one at: SCOLL_HOST
// when set, else the first IPv4 address of an up, non-loopback interface,
// else the loopback address.
func localHost() string {
	if h := os.Getenv("SCOLL_HOST"); h != "" {
		return h
	}
	ifs, err := net.Interfaces()
	if err == nil {
		for _, ifc := range ifs {
			if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
				continue
			}
			as, _ := ifc.Addrs()
			for _, a := range as {
				if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
					return ipn.IP.String()
				}
			}
		}
	}
	return "127.0.0.1"
}
