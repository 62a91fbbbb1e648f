// Package join makes the endpoint of one rank of a job started by Init:
// it finds the job's ranks that share this rank's host and, on Linux,
// joins them through a shared-memory segment (transport/shm), the others
// through the network endpoint (transport/mixed). Every rank learns every
// rank's host, so that the node-aware algorithms choose alike everywhere.
package join

// HostnameEnv names the environment variable that overrides the host name
// of every node-aware feature, so that one machine can pretend to be
// several (package scoll exports it).
const HostnameEnv = "SCOLL_HOSTNAME"
