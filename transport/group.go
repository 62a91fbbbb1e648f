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
