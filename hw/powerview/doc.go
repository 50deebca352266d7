// Package powerview keeps the last power state rmsd knows of each node:
// what its own reads returned and what its own power changes set, as the
// platform adapters report them (platform.Deps.PowerSeen). Nothing here
// talks to hardware; Refresh reads through a caller-supplied function at a
// slow, bounded pace so a view nobody else refreshes does not go stale.
package powerview
