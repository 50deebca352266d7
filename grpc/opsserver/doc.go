// Package opsserver implements rmsd's read service, rmsd_ops.Ops, served on
// the main gRPC port: the audit log from the store and the job listing from
// the job registry, each a page at a time.
package opsserver
