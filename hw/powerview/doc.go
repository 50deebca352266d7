// Package powerview keeps what rmsd last learned of each node for its
// web console: the power state its own reads returned and its own power
// changes set, as the platform adapters report them
// (platform.Deps.PowerSeen), and the node's firmware inventory and slot
// once read. Nothing here talks to hardware; Refresher reads through a
// caller-supplied function at a slow, bounded pace (one node at a time, a
// round per interval) so a view nobody else refreshes does not go stale.
package powerview
