package tcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/scoll/scoll/internal/errs"
)

// The handshake that opens every connection. Both sides prove that they
// know the job's secret without revealing it (HMAC-SHA256 challenge and
// response with fresh nonces from both sides), so a peer that does not
// know the secret learns nothing and can deliver nothing:
//
//	dialer   → acceptor  hello:  magic "SCLH", version, job size, from, to, nonce_d
//	acceptor → dialer    chal:   nonce_a, HMAC(secret, "acceptor" ‖ hello ‖ nonce_a)
//	dialer   → acceptor  proof:  HMAC(secret, "dialer" ‖ hello ‖ nonce_a)
//	acceptor → dialer    verdict: 1 byte (accepted, or duplicate connection)
//
// The dialer checks the acceptor's proof before it answers, the acceptor
// checks the dialer's before it sends the verdict, and frames are read only
// after both. Every message has a fixed size, so nothing is allocated from
// what an unauthenticated peer sends.
const (
	helloLen   = 4 + 2 + 2 + 4 + 4 + 4 + nonceLen
	nonceLen   = 32
	macLen     = sha256.Size
	chalLen    = nonceLen + macLen
	version    = 1
	helloMagic = "SCLH"
)

// Verdicts.
const (
	verdictAccept    byte = 1
	verdictDuplicate byte = 2 // the peers already have a connection; use it
)

// errAuth is wrapped by every handshake failure caused by the peer.
var errAuth = errors.New("handshake failed")

type hello struct {
	size, from, to int
	nonce          [nonceLen]byte
}

func (h *hello) encode() []byte {
	b := make([]byte, helloLen)
	copy(b, helloMagic)
	binary.LittleEndian.PutUint16(b[4:], version)
	binary.LittleEndian.PutUint32(b[8:], uint32(h.size))
	binary.LittleEndian.PutUint32(b[12:], uint32(h.from))
	binary.LittleEndian.PutUint32(b[16:], uint32(h.to))
	copy(b[20:], h.nonce[:])
	return b
}

// decodeHello parses a hello and checks it against the acceptor's own rank
// and job size.
func decodeHello(b []byte, me, size int) (hello, error) {
	var h hello
	if len(b) != helloLen {
		return h, fmt.Errorf("%w: hello of %d bytes", errAuth, len(b))
	}
	if string(b[:4]) != helloMagic {
		return h, fmt.Errorf("%w: not a scoll connection (magic %q)", errAuth, b[:4])
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != version {
		return h, fmt.Errorf("%w: protocol version %d, want %d", errAuth, v, version)
	}
	if f := binary.LittleEndian.Uint16(b[6:]); f != 0 {
		return h, fmt.Errorf("%w: unknown flags %#x", errAuth, f)
	}
	s := binary.LittleEndian.Uint32(b[8:])
	from := binary.LittleEndian.Uint32(b[12:])
	to := binary.LittleEndian.Uint32(b[16:])
	if s != uint32(size) {
		return h, fmt.Errorf("%w: peer belongs to a job of %d ranks, this one has %d", errAuth, s, size)
	}
	if to != uint32(me) {
		return h, fmt.Errorf("%w: peer wants rank %d, this is rank %d", errAuth, to, me)
	}
	if from >= uint32(size) || from == uint32(me) {
		return h, fmt.Errorf("%w: peer claims rank %d", errAuth, from)
	}
	h.size, h.from, h.to = int(s), int(from), int(to)
	copy(h.nonce[:], b[20:])
	return h, nil
}

func proof(secret []byte, role string, hello, nonce []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(role))
	m.Write(hello)
	m.Write(nonce)
	return m.Sum(nil)
}

// dialHandshake runs the dialer's side on conn and returns the verdict.
func dialHandshake(conn net.Conn, secret []byte, size, from, to int, deadline time.Time) (byte, error) {
	conn.SetDeadline(deadline)
	defer conn.SetDeadline(time.Time{})
	h := hello{size: size, from: from, to: to}
	rand.Read(h.nonce[:])
	hb := h.encode()
	if _, err := conn.Write(hb); err != nil {
		return 0, err
	}
	var chal [chalLen]byte
	if _, err := io.ReadFull(conn, chal[:]); err != nil {
		return 0, fmt.Errorf("%w: rank %d did not answer: %v", errAuth, to, err)
	}
	nonceA := chal[:nonceLen]
	if !hmac.Equal(chal[nonceLen:], proof(secret, "acceptor", hb, nonceA)) {
		return 0, fmt.Errorf("%w: rank %d's address answered without the job's secret", errAuth, to)
	}
	if _, err := conn.Write(proof(secret, "dialer", hb, nonceA)); err != nil {
		return 0, err
	}
	var v [1]byte
	if _, err := io.ReadFull(conn, v[:]); err != nil {
		return 0, fmt.Errorf("%w: rank %d refused the connection: %v", errAuth, to, err)
	}
	if v[0] != verdictAccept && v[0] != verdictDuplicate {
		return 0, fmt.Errorf("%w: rank %d sent verdict %d", errAuth, to, v[0])
	}
	return v[0], nil
}

// acceptHandshake runs the acceptor's side on conn up to the verdict, which
// the caller sends with sendVerdict once it has decided. It returns the
// dialer's rank.
func acceptHandshake(conn net.Conn, secret []byte, me, size int, deadline time.Time) (int, error) {
	conn.SetDeadline(deadline)
	hb := make([]byte, helloLen)
	if _, err := io.ReadFull(conn, hb); err != nil {
		return -1, fmt.Errorf("%w: reading hello: %v", errAuth, err)
	}
	h, err := decodeHello(hb, me, size)
	if err != nil {
		return -1, err
	}
	var chal [chalLen]byte
	rand.Read(chal[:nonceLen])
	copy(chal[nonceLen:], proof(secret, "acceptor", hb, chal[:nonceLen]))
	if _, err := conn.Write(chal[:]); err != nil {
		return -1, fmt.Errorf("%w: %v", errAuth, err)
	}
	var mac [macLen]byte
	if _, err := io.ReadFull(conn, mac[:]); err != nil {
		return -1, fmt.Errorf("%w: reading proof of rank %d: %v", errAuth, h.from, err)
	}
	if !hmac.Equal(mac[:], proof(secret, "dialer", hb, chal[:nonceLen])) {
		return -1, fmt.Errorf("%w: peer claiming rank %d does not know the job's secret", errAuth, h.from)
	}
	return h.from, nil
}

func sendVerdict(conn net.Conn, v byte) error {
	_, err := conn.Write([]byte{v})
	conn.SetDeadline(time.Time{})
	return err
}

// checkSecret rejects secrets too short to resist guessing.
func checkSecret(secret []byte) error {
	if len(secret) < 16 {
		return fmt.Errorf("%w: the job secret has %d bytes, want at least 16 (set SCOLL_SECRET)", errs.InvalidArgument, len(secret))
	}
	return nil
}
