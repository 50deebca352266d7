// Package platform maps every hw.NodeType to the adapter that drives it and
// the capabilities it has: compute trays (Redfish), power shelves (Redfish,
// LiteOn/PMC or Delta style) and NVLink switch trays (BMC Redfish for power,
// NVUE for device info and firmware listing, SSH/SFTP staging plus NVUE
// install and power cycle for firmware update; SFTP staging under
// /host/nos-images plus NVUE image actions for NVOS system images, see
// SwitchImager).
//
// A Device holds no state between calls beyond its clients: a firmware
// task is the device's own (Redfish task, NVUE action), so the adapter
// built for one operation can follow a task another one started.
//
// The table in table.go is the only place a node type is matched; a test
// fails if a type has no entry. Every Device implements every capability
// interface; an operation a platform cannot do returns an error wrapping
// hw.ErrUnsupported, never a silent no-op.
package platform
