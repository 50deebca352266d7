// Package clusterparent computes the status of a cluster parent (a batch
// split over racks, recorded in the shared store) from its racks'
// batches: the one rule every member uses, whether it answers
// GetJobStatus (grpc/forward) or renders the console (sitejobs).
package clusterparent
