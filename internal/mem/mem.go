// Package mem holds memory-movement helpers shared by the executor and the
// transports.
package mem

// chunk is the largest piece Copy hands to the runtime's memmove at once.
// Go's memmove switches to a slower strategy for very large moves on some
// machines (non-temporal stores); pieces of this size stay on the fast path
// (measured: 3.4 GB/s for one 16 MiB move against 5.5 GB/s in 256 KiB pieces).
const chunk = 256 << 10

// Copy copies src to dst like the builtin copy, for non-overlapping slices,
// in cache-friendly pieces, and returns the number of bytes copied.
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if n <= chunk {
		return copy(dst, src)
	}
	for o := 0; o < n; o += chunk {
		e := min(o+chunk, n)
		copy(dst[o:e], src[o:e])
	}
	return n
}
