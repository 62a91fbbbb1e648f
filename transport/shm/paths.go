//go:build linux

package shm

import "github.com/scoll/scoll/transport"

func init() {
	transport.RegisterPaths("shm", []transport.PathInfo{
		{Name: "ring", Doc: "one record in the pair's ring, copied in by the sender and out by the receiver; longer messages in chunks, pipelined",
			When: "the messages of collective calls between processes of one host (the default under Init on Linux; SCOLL_TRANSPORT=tcp turns it off) below 64 KiB, or larger where single copy is not permitted"},
		{Name: "single-copy", Doc: "the receiver copies the sender's buffer with process_vm_readv(2) straight into its receive buffer, then acks",
			When: "messages of collective calls from 64 KiB (Config.CMAMin) where the receiver may read the sender's memory"},
		{Name: "exchange", Doc: "the whole call: every rank publishes its input in its slot of the segment and reads the others'",
			When: "small blocking calls of the world communicator when every rank is on the host (algorithm exchange)"},
	}...)
}
