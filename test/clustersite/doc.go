// Package clustersite runs a site served by an rmsd cluster, for the chaos
// run, the cluster benchmarks and cmd/rmsd's cluster tests: the rack
// simulator in the calling process (so its overlap count can be read), one
// private PostgreSQL database, and rmsd members as processes of their own
// on loopback with the automanaged provider or etcd. It follows each
// member's log (test/proclog: its addresses, its racks' services and
// grains, any message a caller waits for), kills, stops and restarts
// members as an operator or a crash would, and tells when rack ownership
// has settled. It does not judge what it runs: the callers check
// outcomes.
package clustersite
