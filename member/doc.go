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
//
// While it holds the lease, a rack's grain runs the rack's service
// (Config.OpenRack: the rack's job engine and handlers) and answers the
// calls other members forward to the rack (Member.Forward) with it; a lost
// lease abandons the service at once, a rack leaving the member (moved by
// the cluster, or handed over by a draining member, Drain and Stop) gives
// its jobs the hand-over window first. Node changes are announced to every
// member (AnnounceNodes), which reload the rack's nodes (docs/cluster.md).
//
// A member that another member has blocked from the cluster (protoactor
// blocks a dropped member's actor system for good) fences itself: every
// quarter of the membership timeout it asks the other members of its view
// whether they have blocked it, and at the first yes it abandons and
// releases every rack and takes none again (Blocked); the process then
// exits for its supervisor to start it again.
package member
