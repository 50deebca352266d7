// Package gnmicap checks a switch's gNMI telemetry server the way upstream
// RMS does: one Capabilities call with the user name and password as
// request metadata (southbound §3.12), over github.com/openconfig/gnmi's
// generated client.
package gnmicap
