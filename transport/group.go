package transport

// Communicators derived from the world (split, duplicated, created) share
// their rank's transport endpoint. Their messages carry the derived
// communicator's context id in Key.Comm and are addressed to transport
// ranks: the executor translates the communicator's ranks before it posts
// (exec.Call.Peers), so transports move bytes between endpoints and never
// need to know a communicator's membership. Only state a transport keeps
// per communicator (call records for mismatch checks, shared-memory
// meetings and exchanges) is indexed by communicator rank; transports with
// such state implement Grouper.

// Group describes one rank's membership of a communicator derived from the
// world.
type Group struct {
	// Comm is the communicator's context id. It differs from the id of
	// every other live communicator that has a member in common with it.
	Comm uint64
	// Rank is this rank's rank in the group; Size is the group's size.
	Rank, Size int
	// Members[r] is the transport rank of group rank r, or Members is nil
	// when this rank does not hold the whole table (a distributed table).
	// Members is not modified after Join, by the transport or the caller.
	Members []int32
}

// Grouper is implemented by transports that keep state per communicator.
// Join returns this rank's view of the communicator g: a value that
// implements, with ranks and sizes of the group, those of Checker, Meeter
// and Exchanger that the transport offers for it (a transport may offer
// fewer than for the world, for example no shared-memory paths when
// g.Members is nil). Every member joins once before the communicator's
// first call; its state is allocated when a call first needs it and freed
// when the last member leaves.
type Grouper interface {
	Join(g Group) GroupView
}

// GroupView is one rank's view of a communicator, returned by Join.
type GroupView interface {
	// Leave frees this rank's part of the communicator's state. The view
	// must not be used afterwards.
	Leave()
}

// Responder is implemented by transports that answer requests addressed
// to a rank while that rank is busy elsewhere (active messages, in the
// role one-sided communication plays in MPI). It serves the lookups of
// distributed group tables.
//
// A request is an eager message with Key{Comm: service, Seq: 0, Tag: t}
// and 0 ≤ t < ReplyTag, sent to an endpoint that serves service. The transport does
// not deliver it to a receive: it calls the service's handler with the
// sender's rank and the request, on a goroutine of its own or of the
// sender, and sends the handler's reply back to the sender as an eager
// message with Key{Comm: service, Seq: 0, Tag: t | ReplyTag}, for which
// the requester has posted a receive. Requests that arrive before Serve wait
// for it; after Unserve they get an empty reply. Requests must be at most
// MaxRequest bytes.
type Responder interface {
	// Serve makes h the handler of service at this endpoint. h must not
	// block, and must not keep req or modify it.
	Serve(service uint64, h func(src int, req []byte) []byte)
	// Unserve removes the handler of service.
	Unserve(service uint64)
}

// MaxRequest is the largest request a Responder must accept.
const MaxRequest = 4096

// ReplyTag marks the tags of replies to requests.
const ReplyTag = 1 << 62

// IsRequest reports whether a message with key k is a request to a
// service (given that k.Comm is served).
func IsRequest(k Key) bool { return k.Seq == 0 && k.Tag >= 0 && k.Tag < ReplyTag }

// ReplyKey returns the key of the reply to a request with key k.
func ReplyKey(k Key) Key { return Key{Comm: k.Comm, Tag: k.Tag | ReplyTag} }
