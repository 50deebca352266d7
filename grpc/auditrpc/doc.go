// Package auditrpc is the gRPC side of the audit log: a unary interceptor
// that gives an audit.Recorder one record per audited call (the caller's
// identity from its client certificate or peer address, the method, the
// racks and nodes the request named, the jobs the reply named, the
// outcome), and the set of rack_manager methods that change something and
// are therefore audited.
package auditrpc
