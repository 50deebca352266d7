package hw

import "fmt"

// NodeType identifies a hardware platform. Its numeric values and names are
// those of the wire enum rack_manager.NodeType; a test in grpc/rmsserver checks
// the two stay identical, so this is the one place they are spelled out.
type NodeType int32

// The node types of rack_manager.NodeType.
const (
	NodeTypeUnspecified   NodeType = 0
	ComputeGB200Nvidia    NodeType = 1
	PowerShelfGB200Liteon NodeType = 2
	SwitchGB200Nvidia     NodeType = 3
	PowerShelfGB200Delta  NodeType = 4
	ComputeGB300Nvidia    NodeType = 5
	SwitchGB300Nvidia     NodeType = 6
	PowerShelfGB300Liteon NodeType = 7
	PowerShelfGB300Delta  NodeType = 8
	ComputeGB300Lenovo    NodeType = 9
	ComputeVRNVL72Nvidia  NodeType = 10
	SwitchVRNVL72Nvidia   NodeType = 11
)

// Node types that only a node descriptor can name: the wire enum has no
// value for them, so they travel as NODE_TYPE_UNSPECIFIED plus a descriptor.
// Their numbers are outside the wire enum's range.
const (
	ComputeGB200Wiwynn     NodeType = 1001
	ComputeGB300Supermicro NodeType = 1002
)

// Kind is the broad family of a node: it decides which southbound protocols
// apply to it.
type Kind int

// The node kinds.
const (
	KindUnknown Kind = iota
	KindCompute
	KindSwitch
	KindPowerShelf
)

func (k Kind) String() string {
	switch k {
	case KindCompute:
		return "compute"
	case KindSwitch:
		return "switch"
	case KindPowerShelf:
		return "power_shelf"
	default:
		return "unknown"
	}
}

type nodeTypeInfo struct {
	wire     string // enum value name on the wire
	internal string // lower-case name used in logs, job records and config
	kind     Kind
}

var nodeTypes = map[NodeType]nodeTypeInfo{
	NodeTypeUnspecified:    {"NODE_TYPE_UNSPECIFIED", "unspecified", KindUnknown},
	ComputeGB200Nvidia:     {"COMPUTE_GB200_NVIDIA", "compute_gb200_nvidia", KindCompute},
	PowerShelfGB200Liteon:  {"POWERSHELF_GB200_LITEON", "powershelf_gb200_liteon", KindPowerShelf},
	SwitchGB200Nvidia:      {"SWITCH_GB200_NVIDIA", "switch_gb200_nvidia", KindSwitch},
	PowerShelfGB200Delta:   {"POWERSHELF_GB200_DELTA", "powershelf_gb200_delta", KindPowerShelf},
	ComputeGB300Nvidia:     {"COMPUTE_GB300_NVIDIA", "compute_gb300_nvidia", KindCompute},
	SwitchGB300Nvidia:      {"SWITCH_GB300_NVIDIA", "switch_gb300_nvidia", KindSwitch},
	PowerShelfGB300Liteon:  {"POWERSHELF_GB300_LITEON", "powershelf_gb300_liteon", KindPowerShelf},
	PowerShelfGB300Delta:   {"POWERSHELF_GB300_DELTA", "powershelf_gb300_delta", KindPowerShelf},
	ComputeGB300Lenovo:     {"COMPUTE_GB300_LENOVO", "compute_gb300_lenovo", KindCompute},
	ComputeVRNVL72Nvidia:   {"COMPUTE_VRNVL72_NVIDIA", "compute_vrnvl72_nvidia", KindCompute},
	SwitchVRNVL72Nvidia:    {"SWITCH_VRNVL72_NVIDIA", "switch_vrnvl72_nvidia", KindSwitch},
	ComputeGB200Wiwynn:     {"", "compute_gb200_wiwynn", KindCompute},
	ComputeGB300Supermicro: {"", "compute_gb300_supermicro", KindCompute},
}

// NodeTypes lists every node type of the wire enum except
// NodeTypeUnspecified, in numeric order.
func NodeTypes() []NodeType {
	out := make([]NodeType, 0, len(nodeTypes))
	for t := ComputeGB200Nvidia; t <= SwitchVRNVL72Nvidia; t++ {
		out = append(out, t)
	}
	return out
}

// AllNodeTypes lists NodeTypes followed by the descriptor-only types.
func AllNodeTypes() []NodeType {
	return append(NodeTypes(), ComputeGB200Wiwynn, ComputeGB300Supermicro)
}

// Wire returns the value sent in rack_manager.NodeType: the type itself, or
// NodeTypeUnspecified for a descriptor-only type.
func (t NodeType) Wire() NodeType {
	if t > SwitchVRNVL72Nvidia {
		return NodeTypeUnspecified
	}
	return t
}

// Valid reports whether t is a defined, specified node type.
func (t NodeType) Valid() bool {
	_, ok := nodeTypes[t]
	return ok && t != NodeTypeUnspecified
}

// String returns the wire enum name, e.g. "COMPUTE_GB200_NVIDIA", or for a
// descriptor-only type its internal name.
func (t NodeType) String() string {
	if info, ok := nodeTypes[t]; ok {
		if info.wire == "" {
			return info.internal
		}
		return info.wire
	}
	return fmt.Sprintf("NodeType(%d)", int32(t))
}

// Name returns the lower-case internal name, e.g. "compute_gb200_nvidia".
func (t NodeType) Name() string {
	if info, ok := nodeTypes[t]; ok {
		return info.internal
	}
	return fmt.Sprintf("node_type_%d", int32(t))
}

// Kind returns the family of the node type.
func (t NodeType) Kind() Kind {
	return nodeTypes[t].kind
}
