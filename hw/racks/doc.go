// Package racks keeps the racks and nodes registered with CreateNodes, for
// the lifetime of the process.
//
// A rack is created lazily by the first node registered in it and takes the
// product family of that node; nodes of another family are refused. A rack
// stays registered when its last node is deleted. The registry is safe for
// concurrent use: reads share a lock; a registration, update or removal is
// checked and reserved, then applied, under the exclusive lock, and written
// to the store (the Observer) between the two without it, so a slow store
// never holds up a look-up (pending.go). Which nodes and racks are busy is not kept here: the job
// engine's registry owns every hold (jobs and short leases alike).
// Refusals are *Error values worded for the caller who sent the node (the
// gRPC edge shows them as they are); errors.Is matches their sentinel.
package racks
