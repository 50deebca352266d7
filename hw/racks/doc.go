// Package racks keeps the racks and nodes registered with CreateNodes, for
// the lifetime of the process, and the per-rack power guard.
//
// A rack is created lazily by the first node registered in it and takes the
// product family of that node; nodes of another family are refused. The
// registry is safe for concurrent use: reads share a lock, registration and
// removal are exclusive. The power guard is a try-lock per rack id: a
// registered power change, a node removal or a registration on a rack whose
// guard is held is refused at once, never queued.
package racks
