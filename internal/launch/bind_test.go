package launch

import (
	"reflect"
	"testing"
)

func TestBindPlan(t *testing.T) {
	for _, tc := range []struct {
		np   int
		cpus []int
		want [][]int
	}{
		{2, []int{0, 1}, [][]int{{0}, {1}}},
		{2, []int{0, 1, 2, 3, 4}, [][]int{{0, 1}, {2, 3}}}, // CPU 4 left over
		{3, []int{2, 5, 7, 9, 11, 12}, [][]int{{2, 5}, {7, 9}, {11, 12}}},
		{1, []int{3}, [][]int{{3}}},
		{3, []int{0, 1}, nil}, // oversubscribed: no binding
		{1, nil, nil},         // unknown CPUs
	} {
		if got := bindPlan(tc.np, tc.cpus); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("bindPlan(%d, %v) = %v, want %v", tc.np, tc.cpus, got, tc.want)
		}
	}
}
