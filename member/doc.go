// Package member makes an rmsd one member of a cluster that shares a site:
// it joins protoactor's cluster (remote plus a membership provider) and
// hosts the cluster kind "rack", one grain per rack with the identity
// rack/<rack_id>. A rack grain's activation on a member is that member's
// ownership of the rack: on activation the grain takes the rack's lease
// in the store (package racklease), keeps it while it lives, and releases
// it when it stops. Every member keeps every registered rack activated
// somewhere by touching each rack's grain every quarter of the membership
// timeout, so a member that is lost has its racks activated, and taken, by
// the survivors once the cluster has dropped it and its leases have ended.
// The job engine is not part of the cluster yet (docs/cluster.md).
package member
