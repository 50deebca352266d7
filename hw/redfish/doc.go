// Package redfish is the Redfish/HTTPS client RMS uses to drive BMCs: compute
// trays, power shelves (LiteOn/PMC and Delta styles) and switch-tray BMCs.
//
// It owns the wire side only: HTTPS with Basic auth on every request, the
// connect/request/upload timeouts, JSON decoding of the resources RMS reads,
// and the error taxonomy (see errors.go) that callers map to job error codes.
// One Pool holds the shared http.Transport, so thousands of BMCs reuse a
// bounded set of connections; a Client is a cheap per-endpoint view of it.
//
// Capabilities: system power (#ComputerSystem.Reset), manager reset, power
// shelf power through chassis actions and their ActionInfo, PSU aggregation,
// the processor OEM MNNVLink topology (device info), the firmware inventory
// walk, multipart firmware upload with task polling, the power-shelf raw
// push with ApplyTime=OnReset, the NVIDIA chassis aux power cycle and the
// "went down, came back" liveness wait used after resets.
package redfish
