//go:build linux

package shm

// CountCPUs exports countCPUs to the tests.
var CountCPUs = countCPUs

// UniqueBell exports uniqueBell to the tests.
var UniqueBell = uniqueBell
