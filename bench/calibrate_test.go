package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/scoll/scoll/algorithms"
)

// TestMeasureLogP: the measured overhead and gap are positive, the latency
// not negative, all finite and below a millisecond (an in-process 8-byte
// message), and they build a fibonacci tree.
func TestMeasureLogP(t *testing.T) {
	L, o, g, err := MeasureLogP(context.Background(), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{L, o, g} {
		if math.IsNaN(x) || x < 0 || x > 1e-3 {
			t.Fatalf("L = %g, o = %g, g = %g", L, o, g)
		}
	}
	if o <= 0 || g <= 0 {
		t.Errorf("L = %g, o = %g, g = %g: overhead and gap must be positive", L, o, g)
	}
	if err := algorithms.CheckLogP(algorithms.LogP{L: L, O: o, G: g}); err != nil {
		t.Error(err)
	}
	t.Logf("L = %.3g s, o = %.3g s, g = %.3g s", L, o, g)
}
