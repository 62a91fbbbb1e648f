//go:build mpi

package mpi

// The transport keeps posted receives (recvs) and headers without a
// receive (unexp) as queues by match key; an empty queue is no entry.

// popFront removes and returns the first element of queue k of qs, or nil
// when the queue is empty.
func popFront[V any](qs map[matchKey][]*V, k matchKey) *V {
	q := qs[k]
	if len(q) == 0 {
		return nil
	}
	v := q[0]
	if len(q) == 1 {
		delete(qs, k)
	} else {
		q[0] = nil // the queue's array keeps no reference
		qs[k] = q[1:]
	}
	return v
}

// removeAt removes the element at i of queue k of qs, keeping the order of
// the others.
func removeAt[V any](qs map[matchKey][]*V, k matchKey, i int) {
	q := qs[k]
	if len(q) == 1 {
		delete(qs, k)
		return
	}
	qs[k] = append(q[:i], q[i+1:]...)
	q[len(q)-1] = nil
}
