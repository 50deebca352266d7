// Package rmspb holds the Go code generated from proto/rack_manager: the
// messages, enums and service stubs of rack_manager.RackManager. Everything
// here except this file is generated; regenerate with `task generate`.
package rmspb
