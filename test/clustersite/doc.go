// Package clustersite runs a simulated site served by an rmsd cluster, for
// the chaos run and the cluster benchmarks: the rack simulator in the
// calling process (so its overlap count can be read), one private
// PostgreSQL database, and rmsd members as processes of their own on
// loopback with the automanaged provider. It kills, stops and restarts
// members as an operator or a crash would. It does not judge what it runs:
// the callers check outcomes.
package clustersite
