// Package toy holds no code: its test adds a toy algorithm with a toy knob
// the way docs/architecture.md's checklists say (an algorithm file with its
// knob, an option, its golden files) and checks that every layer that
// reads the registry sees them — the registry and the planner, the golden
// files, docs/algorithms.md's table, scoll algorithms and the environment override
// SCOLL_<KNOB>_<COLLECTIVE>.
package toy
