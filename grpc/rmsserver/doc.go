// Package rmsserver is rmsd's gRPC edge: it serves rack_manager.RackManager
// and rack_manager_v2.RackManagerV2 on one listener, with health, reflection,
// keepalive enforcement, per-RPC logging and panic recovery.
//
// Handlers are thin: they validate a request, ask the engine or the hardware
// layer through the interfaces in Deps, and convert the answer. Proto types
// do not leave this package.
//
// Lifecycle: New builds the server; Serve marks health SERVING and blocks;
// MarkNotServing turns health NOT_SERVING for good while connections are
// still accepted (the caller's drain delay); Shutdown marks health
// NOT_SERVING, stops accepting connections, lets in-flight RPCs finish until
// its context ends, then cuts the rest.
//
// The handlers are one implementation, Handlers (NewHandlers): the Server
// registers them, and a cluster member's rack grain calls them without a
// listener (Invoke) to serve a call another member forwarded to it
// (grpc/forward). Options.Inner runs interceptors innermost, after
// authorization; RecordReason lets one report the in-band reason of a
// reply it got from elsewhere.
//
// RPCs whose issue has not landed are listed in pending.go and answer
// UNIMPLEMENTED; a test keeps that list and the service descriptors in step.
package rmsserver
