// Package audit records who did what: one record per mutating RPC (and per
// admin-service call) with the caller's identity, the RPC, the racks, nodes
// and jobs it named and its outcome, never a credential. A Recorder writes
// each record at once to the audit log stream and hands it to the store
// through a bounded queue, so a slow or unavailable store never delays an
// RPC; it also prunes the store's records past their retention.
package audit
