// Package actorsystem creates rmsd's protoactor actor systems. Every
// system rmsd runs (the job engine's, a cluster member's, its racks')
// comes from New, so that each is built the same way.
//
// The one thing New changes is the size of the process registry.
// protoactor keeps the local actors of a system in 1,024 buckets, each a
// concurrent map of its own, and that map library splits every map into
// 32 shards (its package variable SHARD_COUNT), so an empty registry
// holds 32,768 maps: about 2.7 MiB live per system, which the collector's
// headroom doubles in resident memory. 1,024 buckets already spread the
// registry's locks far wider than rmsd's few thousand actors and two to a
// few dozen cores contend for, so this package sets SHARD_COUNT to 1 when
// the program starts (1,024 maps, about 120 KiB).
//
// The variable is read by the map library whenever a key is placed, so it
// is set once, in this package's init, before any goroutine of the
// program runs and before any registry exists. Lowering it is safe even
// for a map built before (every key then lands in that map's first
// shard); raising it after maps exist would not be, and nothing does.
package actorsystem
