package algorithms

import "sync"

// memo is a bounded cache of values computed once per key: the first
// caller of a key computes its value while concurrent callers of the same
// key wait for it (every rank of a large in-process world asks at once),
// and beyond max keys the oldest is dropped (callers that hold its value
// keep it). It owns the algorithms' memoised tables, so that a long-running
// process that sees many machine shapes does not grow without bound.
type memo[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	m     map[K]*memoEntry[V]
	order []K // keys, oldest first
}

type memoEntry[V any] struct {
	once sync.Once
	v    V
}

// newMemo returns an empty memo of at most max keys.
func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{max: max, m: map[K]*memoEntry[V]{}}
}

// get returns the value of k, computing it with compute if no caller has.
func (c *memo[K, V]) get(k K, compute func() V) V {
	c.mu.Lock()
	e := c.m[k]
	if e == nil {
		e = &memoEntry[V]{}
		c.m[k] = e
		c.order = append(c.order, k)
		if len(c.order) > c.max {
			delete(c.m, c.order[0])
			c.order = append(c.order[:0:0], c.order[1:]...)
		}
	}
	c.mu.Unlock()
	e.once.Do(func() { e.v = compute() })
	return e.v
}

// len returns the number of keys held.
func (c *memo[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
