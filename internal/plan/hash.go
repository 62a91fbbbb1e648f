package plan

// Hash is FNV-1a over 64-bit words. The ranks of a communicator hash what
// they must agree on (a call's collective, counts, root, algorithm and
// options; a split's options) into signatures they compare.
type Hash uint64

// NewHash returns the hash of nothing (FNV-1a's offset basis).
func NewHash() Hash { return 14695981039346656037 }

// Add mixes the words xs in.
func (h *Hash) Add(xs ...uint64) {
	for _, x := range xs {
		*h = (*h ^ Hash(x)) * 1099511628211
	}
}

// Str mixes in the bytes of s, one word each.
func (h *Hash) Str(s string) {
	for i := 0; i < len(s); i++ {
		h.Add(uint64(s[i]))
	}
}

// Ints mixes in the length of xs, then its elements: nil and empty hash
// alike, and [1] differs from [1 0].
func (h *Hash) Ints(xs []int) {
	h.Add(uint64(len(xs)))
	for _, x := range xs {
		h.Add(uint64(x))
	}
}
