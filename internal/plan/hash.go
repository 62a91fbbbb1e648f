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

// A signature's top byte says what was called, so that a rank that finds
// another rank's signature differing from its own can say what that rank
// called (SigCollective): a collective c is c+1, a communicator
// constructor (Split, Dup, Create, ...) SigConstructor; 0 is nothing known.
const (
	sigShift       = 56
	SigConstructor = 0xff
)

// Sig returns the signature of a call of kind (a collective's
// schedule.Collective+1, or SigConstructor): h with its top byte kind.
func (h Hash) Sig(kind uint8) uint64 {
	return uint64(h)&(1<<sigShift-1) | uint64(kind)<<sigShift
}

// SigKind returns the kind of signature sig (Hash.Sig).
func SigKind(sig uint64) uint8 { return uint8(sig >> sigShift) }
