//go:build linux

package shm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/scoll/scoll/internal/errs"
	"github.com/scoll/scoll/transport"
)

// Record types and the header every record starts with.
const (
	recFirst = 1 // first (or only) chunk of a message
	recMore  = 2 // a further chunk of the message in progress
	recAck   = 3 // the receiver matched sync send id (status: 0 ok, 1 mismatch)
	recAbort = 4 // call (comm, seq) failed (status: abortCode)

	hdrLen = 48 // type u8, flags u8, pad, comm, seq, tag, sig, id, total (u32) at 40
)

// Record flags.
const (
	flagSync = 1 // the sender waits for an ack
	flagCMA  = 2 // single copy: the record carries the data's address
)

// Ack statuses.
const (
	ackOK       = 0
	ackMismatch = 1
	ackFailed   = 2 // the receiver could not read the data or its call failed
)

// putMsgHeader fills the header of message m's first record.
func putMsgHeader(hdr []byte, typ, flags byte, m *transport.Msg, id uint64) {
	hdr[0], hdr[1] = typ, flags
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(m.Buf)))
	binary.LittleEndian.PutUint64(hdr[8:], m.Key.Comm)
	binary.LittleEndian.PutUint64(hdr[16:], m.Key.Seq)
	binary.LittleEndian.PutUint64(hdr[24:], uint64(m.Key.Tag))
	binary.LittleEndian.PutUint64(hdr[32:], m.Sig)
	binary.LittleEndian.PutUint64(hdr[40:], id)
}

// Abort codes: what kind of failure a peer reports.
const (
	abortPeer     = 0
	abortMismatch = 1
	abortInvalid  = 2
)

// abortCode returns the abort code that tells the peers what kind of
// error err is.
func abortCode(err error) byte {
	switch {
	case errors.Is(err, errs.Mismatch):
		return abortMismatch
	case errors.Is(err, errs.InvalidArgument):
		return abortInvalid
	}
	return abortPeer
}

// abortErr returns the error of a call that rank from aborted with code.
func abortErr(code byte, from int) error {
	switch code {
	case abortMismatch:
		return fmt.Errorf("%w: rank %d's call failed", errs.Mismatch, from)
	case abortInvalid:
		return fmt.Errorf("%w: rank %d's call failed", errs.InvalidArgument, from)
	}
	return fmt.Errorf("%w: rank %d's call failed", errs.PeerFailed, from)
}
