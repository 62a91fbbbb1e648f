package bench

import (
	"context"
	"log/slog"
	"sync"
)

// choiceLog is the logger of an Auto configuration's ranks: it catches the
// algorithm scoll logs (at debug level, message "scoll: algorithm") when
// rank 0 plans its first call, which is exact even where a persistent
// request would not tell (a blocking call's shared-memory exchange). Where
// scoll logs no choice, measure falls back to the persistent request's
// Persistent.Algorithm.
type choiceLog struct {
	mu    sync.Mutex
	armed bool
	name  string
}

// arm starts catching; disarm stops and returns the algorithm caught, or "".
func (h *choiceLog) arm() {
	h.mu.Lock()
	h.armed, h.name = true, ""
	h.mu.Unlock()
}

func (h *choiceLog) disarm() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = false
	return h.name
}

// Enabled implements slog.Handler: only debug records are of interest.
func (h *choiceLog) Enabled(_ context.Context, l slog.Level) bool { return l == slog.LevelDebug }

// Handle implements slog.Handler: it keeps the first choice of rank 0 while
// armed.
func (h *choiceLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "scoll: algorithm" {
		return nil
	}
	name, rank := "", int64(-1)
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "algorithm":
			name = a.Value.String()
		case "rank":
			if a.Value.Kind() == slog.KindInt64 {
				rank = a.Value.Int64()
			}
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.armed && rank == 0 && h.name == "" {
		h.name = name
	}
	return nil
}

// WithAttrs and WithGroup implement slog.Handler.
func (h *choiceLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *choiceLog) WithGroup(string) slog.Handler      { return h }
