// Package workload combines a registered algorithm (package algorithms) with
// the layers that replay schedules: the simulators (package sim) and the
// cost models (package model). Those layers know schedules and topologies
// only; a workload names the collective, the algorithm and its parameters,
// and builds the generator they replay.
package workload
