package comm

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/scoll/scoll/algorithms"
	"github.com/scoll/scoll/internal/plan"
	"github.com/scoll/scoll/tuning"
)

// EnvVerbose names the environment variable that logs each algorithm
// choice to stderr.
const EnvVerbose = "SCOLL_VERBOSE"

// Settings are what a rank's communicators take from the environment and
// the options: the overrides of the default choices, where choices are
// logged, the error of a bad environment (the calls of a communicator
// made without a way to return it fail with it), and the hooks tests
// inject.
type Settings struct {
	Over  *plan.Overrides
	Log   *slog.Logger
	Err   error
	Hooks Hooks
}

// Hooks are what tests inject into the communicators of a rank (nil
// members: none): Settings.Hooks are every rank's at the start, HooksOf
// changes one rank's.
type Hooks struct {
	// Split runs before each round of a split, with the round's number.
	Split func(round int)
	// Model replaces the local machine model of rank r (as if each rank
	// measured its own γ or read its own parameters file).
	Model func(r int) (algorithms.Machine, *algorithms.LogP)
	// Hostname replaces the host name of world rank r (SplitByNode).
	Hostname func(r int) string
}

// NewSettings reads the environment (the overrides, SCOLL_VERBOSE) and
// takes logger (nil: slog.Default) and a tuning file (nil: SCOLL_TUNING's).
func NewSettings(logger *slog.Logger, tf *tuning.File) *Settings {
	s := &Settings{Log: logger}
	if os.Getenv(EnvVerbose) != "" && os.Getenv(EnvVerbose) != "0" {
		s.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	s.Over, s.Err = plan.OverridesFromEnv(os.Environ(), os.Getenv)
	if s.Err == nil && tf != nil {
		if err := tf.Check(); err != nil {
			s.Err = fmt.Errorf("WithTuning: %w", err)
			return s
		}
		if s.Over == nil {
			s.Over = &plan.Overrides{}
		}
		s.Over.Tuning = tf
	}
	return s
}

// HooksOf returns the hooks of c's rank, which every communicator of the
// rank shares, for tests to set.
func HooksOf(c *Comm) *Hooks { return &c.rs.hooks }

// logChoice logs, at debug level, the entry a newly planned call of c
// runs, its path and what chose it.
func (c *Comm) logChoice(cl *Call, by string, bytes int) {
	log := c.rs.set.Log
	if log == nil || !log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	log.Debug("scoll: algorithm", "collective", cl.coll.String(), "algorithm", cl.info.Name, "by", by, "path", cl.path.String(), "ranks", c.size, "bytes", bytes, "rank", c.rank)
}
