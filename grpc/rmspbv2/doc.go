// Package rmspbv2 holds the Go code generated from proto/rack_manager_v2:
// the rack_manager_v2.RackManagerV2 service. Everything here except this file
// is generated; regenerate with `task generate`.
package rmspbv2
