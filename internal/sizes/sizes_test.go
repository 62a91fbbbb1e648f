package sizes

import (
	"slices"
	"strings"
	"testing"
)

func TestOne(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"0", 0}, {"8", 8}, {" 8 ", 8}, {"8B", 8}, {"1K", 1024}, {"1kib", 1024}, {"1.5K", 1536},
		{"0.5K", 512}, {"16M", 16 << 20}, {"2.25M", 9 << 18}, {"1T", 1 << 40}, {"1024G", 1 << 40}, {"8.", 8},
	} {
		if got, err := One(c.in, 1<<40); err != nil || got != c.want {
			t.Errorf("One(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, why string }{
		{"", "empty"}, {"K", "not a number"}, {"-1", "not a number"}, {"1.2.3", "not a number"}, {".", "not a number"},
		{"12Q", `unknown unit "Q" (valid: B, K, KiB`}, {"1e3", `unknown unit "e3"`}, {"0x10", `unknown unit "x10"`},
		{"1.1K", "not a whole number (1126.40)"}, {"0.5", "not a whole number"},
		{"99999999999999999999", "too large (at most 1T)"}, {"1025G", "too large (at most 1T)"},
		{"18446744073709551615G", "too large"},
	} {
		got, err := One(c.in, 1<<40)
		if err == nil || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "strconv") {
			t.Errorf("One(%q) = %d, %v; want an error saying %q", c.in, got, err, c.why)
		}
	}
	if _, err := One("2M", 1<<20); err == nil || !strings.Contains(err.Error(), "at most 1048576") {
		t.Errorf("One(2M, 1<<20) = %v; want too large, at most 1048576", err)
	}
}

func TestList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"8", []int{8}},
		{"64,4K,32K", []int{64, 4 << 10, 32 << 10}},
		{"16M,8,8,1K", []int{8, 1 << 10, 16 << 20}},
		{"64..1K", []int{64, 128, 256, 512, 1 << 10}},
		{"3..20", []int{3, 4, 8, 16, 20}},
		{"8..8", []int{8}},
		{"0..4", []int{0, 1, 2, 4}},
		{"8:16M:x4", []int{8, 32, 128, 512, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20, 8 << 20, 16 << 20}},
		{"3:20", []int{3, 6, 12, 20}},
		{"1K:4K:*2", []int{1 << 10, 2 << 10, 4 << 10}},
		{"0:10:+4", []int{0, 4, 8, 10}},
		{"1.5K,1..2", []int{1, 2, 1536}},
		{"1:1T:x1099511627776", []int{1, 1 << 40}},
	} {
		if got, err := List(c.in, 1<<40); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("List(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, why string }{
		{"", "empty"}, {"8,", "empty"}, {"8,,16", "empty"}, {"16..8", "start is above the end"}, {"16:8", "start is above"},
		{"0:16:x4", "cannot start at 0"}, {"8:16:x1", "factor"}, {"8:16:x", "factor"}, {"8:16:", "use xF"}, {"8:16:y2", "use xF"},
		{"8:16:+0", "increment"}, {"1:2:3:4", "a range is"}, {"8..", "empty"}, {"..8", "empty"}, {"0:1G:+1", "more than"},
		{"64..1Q", `unknown unit "Q"`}, {"1..99999999999999999999", "too large"},
	} {
		got, err := List(c.in, 1<<40)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("List(%q) = %v, %v; want an error saying %q", c.in, got, err, c.why)
		}
	}
}
