// Package callerid names the caller of an RPC: the verified client
// certificate's subject and subject alternative names when the call came
// over mutual TLS, else the peer's address. The audit log records this
// identity and authorization rules match it; it never carries a secret.
package callerid
