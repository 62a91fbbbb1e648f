package tcp

import "github.com/scoll/scoll/transport"

func init() {
	transport.RegisterPaths("tcp", []transport.PathInfo{
		{Name: "eager", Doc: "the frame goes out at once; a receiver with no receive posted waits briefly, then buffers it",
			When: "messages of at most Config.EagerLimit bytes (1 MiB)"},
		{Name: "rendezvous", Doc: "announced first, then written in 1 MiB chunks straight from the send buffer into the posted receive",
			When: "messages longer than Config.EagerLimit"},
	}...)
}
