package bench

import (
	"errors"
	"slices"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want int
	}{
		{"0", 0}, {"8", 8}, {"8B", 8}, {" 8 ", 8}, {"1K", 1024}, {"1k", 1024}, {"1KB", 1024},
		{"64KiB", 64 << 10}, {"16M", 16 << 20}, {"16mib", 16 << 20}, {"2G", 2 << 30}, {"1GiB", 1 << 30},
		{"1024G", 1 << 40}, {"1.5K", 1536},
	}
	for _, c := range good {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", " ", "-1", "K", "8Q", "8 KiBs", "1.1K", "0x10", "1025G", "99999999999999999999", "18446744073709551615G"} {
		if got, err := ParseSize(in); !errors.Is(err, ErrSize) {
			t.Errorf("ParseSize(%q) = %d, %v; want an ErrSize error", in, got, err)
		}
	}
}

func TestParseSizes(t *testing.T) {
	good := []struct {
		in   string
		want []int
	}{
		{"8", []int{8}},
		{"8,1K,64KiB,16M", []int{8, 1024, 64 << 10, 16 << 20}},
		{"16M,8,8,1K", []int{8, 1024, 16 << 20}},
		{DefaultSizes, []int{8, 32, 128, 512, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20, 8 << 20, 16 << 20}},
		{"8:16M:x4", []int{8, 32, 128, 512, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20, 8 << 20, 16 << 20}},
		{"1:8", []int{1, 2, 4, 8}},
		{"1K:4K:*2", []int{1 << 10, 2 << 10, 4 << 10}},
		{"0:64:+16", []int{0, 16, 32, 48, 64}},
		{"0:10:+4", []int{0, 4, 8, 10}},
		{"4:4", []int{4}},
		{"8:32:x4,16", []int{8, 16, 32}},
	}
	for _, c := range good {
		got, err := ParseSizes(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	bad := []string{
		"", " ", ",", "8,", "8,,16", "abc", "8,x", "16:8", "0:16:x4", "8:16:x1", "8:16:x", "8:16:", "8:16:y2",
		"8:16:+0", "8:16:+", "8:16:+-1", "1:2:3:4", ":16", "8:", "0:1G:+1", "-8:16",
	}
	for _, in := range bad {
		if got, err := ParseSizes(in); !errors.Is(err, ErrSize) {
			t.Errorf("ParseSizes(%q) = %v, %v; want an ErrSize error", in, got, err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0"}, {8, "8"}, {1000, "1000"}, {1024, "1K"}, {1536, "1536"}, {64 << 10, "64K"}, {16 << 20, "16M"}, {3 << 30, "3G"}} {
		got := FormatSize(c.n)
		if got != c.want {
			t.Errorf("FormatSize(%d) = %q, want %q", c.n, got, c.want)
		}
		if back, err := ParseSize(got); err != nil || back != c.n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", c.n, back, err)
		}
	}
}
