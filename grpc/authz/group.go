package authz

// Group is a permission group: a set of RPCs a role grants together.
type Group string

// The permission groups, as [authz.roles] permissions name them.
const (
	// Read: every RPC that only reads (inventory, power state, firmware
	// inventory, catalog, fabric status, job status polls, the version).
	Read Group = "read"
	// Power: power operations, cold reboots and system validation scans.
	Power Group = "power"
	// Firmware: firmware and switch system image updates and the firmware
	// object catalog's changes.
	Firmware Group = "firmware"
	// SwitchAdmin: switch certificates, mTLS and SPDM attestation.
	SwitchAdmin Group = "switch-admin"
	// Fabric: scale-up fabric configuration and state changes.
	Fabric Group = "fabric"
	// Destructive: factory resets and switch password changes.
	Destructive Group = "destructive"
	// Admin: administering rmsd itself, the node registry and the admin
	// service.
	Admin Group = "admin"
)

// Groups lists every group, in the order the documentation lists them
// (the same as config.AuthzGroups).
var Groups = []Group{Read, Power, Firmware, SwitchAdmin, Fabric, Destructive, Admin}
