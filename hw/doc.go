// Package hw holds the identity types shared by every layer that talks about
// hardware: node types, endpoints, credentials and the ErrUnsupported sentinel,
// and the holder (a job or lease id) that every southbound HTTP request names
// (WithHolder, HolderTransport), and the observation of every such request
// by protocol and device kind for the metrics (ObservedTransport).
//
// It is a leaf package: it imports only the standard library, so the gRPC
// edge, the actor engine and the protocol clients (hw/redfish, hw/nvue, ...)
// can all depend on it without cycles. It never performs I/O.
package hw
