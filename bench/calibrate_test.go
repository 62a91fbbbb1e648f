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
	// What is measured depends on the machine's load (the gap may hide
	// behind the round trip and read 0): only the properties the
	// fibonacci trees need are checked, never times.
	for _, x := range []float64{L, o, g} {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			t.Fatalf("L = %g, o = %g, g = %g", L, o, g)
		}
	}
	if o <= 0 {
		t.Errorf("L = %g, o = %g, g = %g: the overhead must be positive", L, o, g)
	}
	if err := algorithms.CheckLogP(algorithms.LogP{L: L, O: o, G: g}); err != nil {
		t.Error(err)
	}
	t.Logf("L = %.3g s, o = %.3g s, g = %.3g s", L, o, g)
}
