package transport

import (
	"slices"
	"strings"
	"sync"
)

// PathInfo describes one way a transport moves a collective call's bytes:
// what scoll algorithms lists under the transports, so that a user can tell
// which code moves their data. The registered algorithms say which
// collective algorithm runs; a transport's paths say how its messages (or,
// for the shared-memory paths, its whole call) travel.
type PathInfo struct {
	// Transport is the transport's name: inproc, tcp, shm or mpi.
	Transport string
	// Name is the path's name.
	Name string
	// When says when the path carries a call or a message, and how to turn
	// it on or off.
	When string
	// Doc is a one-line description.
	Doc string
}

var (
	pathsMu sync.Mutex
	paths   []PathInfo
)

// RegisterPaths adds the paths of transport name (their Transport field is
// set to it); transports call it from their package initialisation.
func RegisterPaths(name string, ps ...PathInfo) {
	pathsMu.Lock()
	defer pathsMu.Unlock()
	for _, p := range ps {
		p.Transport = name
		paths = append(paths, p)
	}
}

// Paths returns the registered paths of the transports linked into the
// program, by transport then name.
func Paths() []PathInfo {
	pathsMu.Lock()
	defer pathsMu.Unlock()
	out := slices.Clone(paths)
	slices.SortFunc(out, func(a, b PathInfo) int {
		if c := strings.Compare(a.Transport, b.Transport); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
