// Package racklease keeps a cluster member's ownership of one rack: it
// acquires the rack's lease in the store, renews it every quarter of its
// length, and stops acting on the rack (Acting turns false, Lost closes)
// as soon as it can no longer be sure the lease is its own: when the
// store refuses a renewal, or when three quarters of the lease have passed
// since the start of the last renewal that succeeded. The store's lease
// ends no earlier than a full lease after that start, so a member cut off
// from the store stops at least a quarter of a lease before any other
// member can take the rack over (docs/cluster.md).
package racklease
