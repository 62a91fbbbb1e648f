package mem

import (
	"bytes"
	"testing"
)

func TestCopy(t *testing.T) {
	for _, n := range []int{0, 1, chunk - 1, chunk, chunk + 1, 3*chunk + 17} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i * 31)
		}
		dst := make([]byte, n+5)
		if got := Copy(dst, src); got != n || !bytes.Equal(dst[:n], src) {
			t.Fatalf("n=%d: copied %d, equal=%v", n, got, bytes.Equal(dst[:n], src))
		}
		short := make([]byte, n/2)
		if got := Copy(short, src); got != n/2 || !bytes.Equal(short, src[:n/2]) {
			t.Fatalf("n=%d: short copy %d", n, got)
		}
	}
}

func BenchmarkCopy16MiB(b *testing.B) {
	src, dst := make([]byte, 16<<20), make([]byte, 16<<20)
	b.SetBytes(16 << 20)
	for b.Loop() {
		Copy(dst, src)
	}
}

func BenchmarkBuiltinCopy16MiB(b *testing.B) {
	src, dst := make([]byte, 16<<20), make([]byte, 16<<20)
	b.SetBytes(16 << 20)
	for b.Loop() {
		copy(dst, src)
	}
}
