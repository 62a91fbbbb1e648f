package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Every harness refuses the fields of Common it does not take, before it
// measures anything, with an error naming the field.
func TestHarnessesRefuseFieldsTheyDoNotTake(t *testing.T) {
	ctx := context.Background()
	im, _ := ParseImbalance("single:delay=1ms")
	ran := func(Progress) { t.Error("a harness ran with a field it does not take") }
	for _, c := range []struct {
		field string
		run   func() error
	}{
		{"Seed", func() error {
			_, err := Run(ctx, Config{Common: Common{NP: 2, Seed: 1, Progress: ran}})
			return err
		}},
		{"Sizes", func() error {
			_, err := RunSplit(ctx, SplitConfig{Common: Common{NP: 2, Sizes: []int{8}, Progress: ran}})
			return err
		}},
		{"Budget", func() error {
			_, err := RunImbalance(ctx, ImbalanceConfig{Imbalance: im, Common: Common{NP: 2, Budget: time.Second, Progress: ran}})
			return err
		}},
		{"NP", func() error {
			_, err := RunSortPhases(ctx, SortPhasesConfig{Entries: []int64{64}, Sorters: []int{2}, Common: Common{NP: 2, Progress: ran}})
			return err
		}},
		{"Warmup", func() error {
			_, err := RunPredicted(ctx, PredictedConfig{Iterations: 1, Segments: 1, ShareEvery: 1, Common: Common{NP: 2, Warmup: 1, Progress: ran}})
			return err
		}},
	} {
		err := c.run()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "takes no "+c.field) {
			t.Errorf("%s: err %v, want ErrConfig naming the field", c.field, err)
		}
	}
}

// normalize fills in a harness's defaults and checks what is given.
func TestCommonNormalize(t *testing.T) {
	all := takesNP | takesSizes | takesReps | takesBudget | takesMaxMemory
	d := defaults{harness: "h", takes: all, np: 3, reps: 7, sizes: []int{8, 16}}
	var c Common
	if err := c.normalize(d); err != nil {
		t.Fatal(err)
	}
	if c.NP != 3 || c.Reps != 7 || len(c.Sizes) != 2 || c.MaxMemory != DefaultMaxMemory {
		t.Errorf("defaults: %+v", c)
	}
	// A harness that does not take MaxMemory leaves it zero.
	c = Common{}
	if err := c.normalize(defaults{harness: "h", takes: takesReps}); err != nil || c.MaxMemory != 0 || c.NP != 0 {
		t.Errorf("no MaxMemory taken: %+v, %v", c, err)
	}
	for _, bad := range []Common{{NP: -1}, {Sizes: []int{}}, {Sizes: []int{-1}}, {Reps: -2}, {Budget: -time.Second}} {
		if err := bad.normalize(d); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", bad, err)
		}
	}
}
