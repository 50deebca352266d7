// Package overlap proves, in the rack simulator, that no two holders (jobs
// or operation leases) ever act on one device at the same time.
//
// rmsd names the holder of every southbound HTTP request in hw.HolderHeader.
// A Recorder keeps, per device, the span of each holder's mutating requests
// (POST, PUT, PATCH, DELETE): from the arrival of its first to the answer of
// its last, open while one is in hand. Two spans of different holders on
// one device that intersect are an overlap, counted once per pair and
// device: the two acted on the device at the same time, or one acted
// between two requests of the other. A mutating request without the header
// is its own holder, so it overlaps whatever holder's span it falls into.
//
// Spans are ordered by a sequence the Recorder advances on every request's
// arrival and answer, not by wall-clock time: what counts is the order the
// simulator saw, which clock resolution cannot blur. Reads are not
// recorded, and neither are SSH and SFTP sessions (they carry no header).
package overlap
