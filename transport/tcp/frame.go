package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Frames. Every frame on an established connection starts with a fixed
// 56-byte little-endian header:
//
//	off size field
//	  0    1 kind
//	  1    1 code   (reason of a nack, fail or withdraw; 0 otherwise)
//	  2    6 reserved, zero
//	  8    8 length (eager, sync: the message length, of which at most one
//	               chunk follows; data: the chunk's length, which follows;
//	               rts: the message length)
//	 16    8 key.Comm
//	 24    8 key.Seq
//	 32    8 key.Tag (≥ 0; for data frames the chunk's offset)
//	 40    8 signature of the call
//	 48    8 id of a message that needs an answer (rts, cts, data, nack,
//	               withdraw, sync, ack)
//
// Only eager, sync and data frames carry a payload. A message of at most
// the eager limit travels as one eager frame (point-to-point messages) or
// one sync frame (collectives): the receiver acknowledges a sync frame when
// it matches a receive, and only then does the send complete. Every send of
// a collective thus completes only once the receiver took it as a message
// of the same call, so ranks that called different collectives always find
// out (the inconsistent message is refused with errs.Mismatch) instead of
// completing on messages nobody receives. A longer one is announced by an
// rts; when the receiver has a matching receive posted it answers cts, and
// the sender then writes a data frame straight from the send buffer, which
// the receiver reads straight into the posted buffer.
const headerLen = 56

type kind uint8

const (
	kindEager     kind = 1 + iota // message with its payload
	kindRTS                       // request to send a long message
	kindCTS                       // clear to send message id
	kindData                      // payload of message id
	kindNack                      // message id refused (code says why)
	kindFail                      // the call key.Comm/key.Seq failed (code says why)
	kindHeartbeat                 // liveness, no content
	kindGoodbye                   // the sender closes the connection cleanly
	kindWithdraw                  // the sender withdrew rts id
	kindSync                      // message with its payload; answer ack id when it matches
	kindAck                       // sync message id matched a receive
	kindUnused1                   // (no longer sent; refused)
	kindUnused2                   // (no longer sent; refused)
	kindReady                     // the sender joined call key.Comm/key.Seq with signature sig
	kindLast      = kindReady
)

// Codes carried by nack, fail and withdraw frames.
const (
	codeNone       uint8 = 0
	codeMismatch   uint8 = 1 // signatures differ: errs.Mismatch
	codePeerFailed uint8 = 2 // a rank failed or left: errs.PeerFailed
	codeCanceled   uint8 = 3 // a rank's context ended: reported as errs.PeerFailed
	codeInvalid    uint8 = 4 // bad argument on some rank: errs.InvalidArgument
	codeLast             = codeInvalid
)

// header is a decoded frame header.
type header struct {
	kind kind
	code uint8
	len  uint64
	key  transport.Key
	sig  uint64
	id   uint64
}

func (h *header) encode(b []byte) {
	_ = b[headerLen-1]
	b[0] = byte(h.kind)
	b[1] = h.code
	clear(b[2:8])
	binary.LittleEndian.PutUint64(b[8:], h.len)
	binary.LittleEndian.PutUint64(b[16:], h.key.Comm)
	binary.LittleEndian.PutUint64(b[24:], h.key.Seq)
	binary.LittleEndian.PutUint64(b[32:], uint64(h.key.Tag))
	binary.LittleEndian.PutUint64(b[40:], h.sig)
	binary.LittleEndian.PutUint64(b[48:], h.id)
}

// decodeHeader parses and checks the parts of a header that do not depend
// on the connection's state. Lengths are checked against the limits before
// anything is allocated for the payload: an eager frame carries at most
// eagerLimit bytes, an rts announces at most maxMessage.
func decodeHeader(b []byte, h *header, eagerLimit int, maxMessage int64) error {
	if len(b) < headerLen {
		return fmt.Errorf("%w: short frame header (%d bytes)", errs.InvalidArgument, len(b))
	}
	*h = header{
		kind: kind(b[0]),
		code: b[1],
		len:  binary.LittleEndian.Uint64(b[8:]),
		key: transport.Key{
			Comm: binary.LittleEndian.Uint64(b[16:]),
			Seq:  binary.LittleEndian.Uint64(b[24:]),
			Tag:  int64(binary.LittleEndian.Uint64(b[32:])),
		},
		sig: binary.LittleEndian.Uint64(b[40:]),
		id:  binary.LittleEndian.Uint64(b[48:]),
	}
	if h.kind < kindEager || h.kind > kindLast {
		return fmt.Errorf("%w: unknown frame kind %d", errs.InvalidArgument, b[0])
	}
	for _, x := range b[2:8] {
		if x != 0 {
			return fmt.Errorf("%w: reserved header bytes set", errs.InvalidArgument)
		}
	}
	if h.code > codeLast {
		return fmt.Errorf("%w: unknown code %d", errs.InvalidArgument, h.code)
	}
	if h.key.Tag < 0 {
		return fmt.Errorf("%w: negative tag %d", errs.InvalidArgument, h.key.Tag)
	}
	switch h.kind {
	case kindUnused1, kindUnused2:
		return fmt.Errorf("%w: frame kind %d is not used", errs.InvalidArgument, h.kind)
	case kindEager, kindSync:
		if h.len > uint64(eagerLimit) {
			return fmt.Errorf("%w: eager frame of %d bytes exceeds the limit %d", errs.InvalidArgument, h.len, eagerLimit)
		}
	case kindRTS, kindData:
		if h.len > uint64(maxMessage) {
			return fmt.Errorf("%w: message of %d bytes exceeds the limit %d", errs.InvalidArgument, h.len, maxMessage)
		}
	default:
		if h.len != 0 {
			return fmt.Errorf("%w: frame kind %d with length %d", errs.InvalidArgument, h.kind, h.len)
		}
	}
	if (h.kind == kindNack || h.kind == kindFail || h.kind == kindWithdraw) != (h.code != codeNone) {
		return fmt.Errorf("%w: frame kind %d with code %d", errs.InvalidArgument, h.kind, h.code)
	}
	return nil
}

// codeErr is the local error for a code received from rank from.
func codeErr(code uint8, from int, what string) error {
	switch code {
	case codeMismatch:
		return fmt.Errorf("%w: rank %d: %s", errs.Mismatch, from, what)
	case codeInvalid:
		return fmt.Errorf("%w: rank %d: %s", errs.InvalidArgument, from, what)
	case codeCanceled:
		return fmt.Errorf("%w: rank %d abandoned the call (context ended): %s", errs.PeerFailed, from, what)
	default:
		return fmt.Errorf("%w: rank %d: %s", errs.PeerFailed, from, what)
	}
}

// errCode is the code that reports err to the other ranks.
func errCode(err error) uint8 {
	switch {
	case errors.Is(err, errs.Mismatch):
		return codeMismatch
	case errors.Is(err, errs.Canceled):
		return codeCanceled
	case errors.Is(err, errs.InvalidArgument):
		return codeInvalid
	default:
		return codePeerFailed
	}
}
