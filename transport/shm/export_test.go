//go:build linux

package shm

// CountCPUs exports countCPUs to the tests.
var CountCPUs = countCPUs
