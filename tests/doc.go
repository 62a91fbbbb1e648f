// Package tests holds scoll's correctness matrix over the transports: every
// registered algorithm of every collective, run for real in process, over
// TCP and over shared memory, against the naive reference of package
// internal/matrix. It has no code of its own; its tests sort after the
// other packages', so go test ./... reports those first.
package tests
