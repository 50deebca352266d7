package hw

// Node is one managed device as callers describe it: its opaque id, the
// rack it belongs to, its type and how to reach its management interfaces.
// BMC is the Redfish endpoint; Host is the NVOS (NVUE/SSH) endpoint of a
// switch. Both may be nil when the caller did not send them.
type Node struct {
	ID              string
	RackID          string
	Type            NodeType
	BMC             *Endpoint
	Host            *Endpoint
	AdditionalHosts []Endpoint
	// InventoryProfile names an expected-inventory profile; "" means none
	// was given (legacy behaviour).
	InventoryProfile string
	// HasInventoryProfile tells an absent profile from an empty one, which
	// is an error.
	HasInventoryProfile bool
}

// Ref identifies a node within its rack.
type Ref struct {
	RackID string
	NodeID string
}

// Ref returns the node's (rack, node) identity.
func (n Node) Ref() Ref { return Ref{RackID: n.RackID, NodeID: n.ID} }

// ProductFamily is the rack generation a node type belongs to.
type ProductFamily string

// The product families.
const (
	FamilyGB200   ProductFamily = "GB200"
	FamilyGB300   ProductFamily = "GB300"
	FamilyVRNVL72 ProductFamily = "VRNVL72"
)

// Family returns the product family of a node type ("" when unknown).
func (t NodeType) Family() ProductFamily {
	switch t {
	case ComputeGB200Nvidia, PowerShelfGB200Liteon, SwitchGB200Nvidia, PowerShelfGB200Delta, ComputeGB200Wiwynn:
		return FamilyGB200
	case ComputeGB300Nvidia, SwitchGB300Nvidia, PowerShelfGB300Liteon, PowerShelfGB300Delta, ComputeGB300Lenovo, ComputeGB300Supermicro:
		return FamilyGB300
	case ComputeVRNVL72Nvidia, SwitchVRNVL72Nvidia:
		return FamilyVRNVL72
	default:
		return ""
	}
}
