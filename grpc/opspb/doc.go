// Package opspb is the generated Go code of rmsd's read service,
// rmsd_ops.Ops (proto/rmsd_ops/ops.proto): the audit log and the job
// listing, served on the main gRPC port. Regenerate it with `task
// generate`; never edit it by hand.
package opspb
