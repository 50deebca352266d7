// Package rpcfields reads what the interceptors of rmsd's gRPC servers need
// from any request or reply, by protobuf reflection and field name: the
// racks and nodes a request names (Targets for the audit record, Reach for
// the authorizer's rack scope), the jobs a reply names and whether a reply
// is an in-band FAILURE; walk is the one walker of nested messages they
// share. It reads ids only, never a request's other fields, so nothing it
// returns is a credential. It also carries the reason of an in-band failure
// from the interceptor that works it out to those outside it.
package rpcfields
