// Package nodeops runs platform operations on many nodes at once, the way
// the synchronous batch RPCs need them: concurrently up to a bound, with at
// most one operation in flight per BMC (a BMC serialises requests anyway and
// some fail under parallel load), and one result per node in request order.
//
// A batch costs about as long as its slowest node, not the sum of its nodes.
// A node's platform adapter is built once and reused by its later
// operations for as long as the node's configuration stays the same.
package nodeops
