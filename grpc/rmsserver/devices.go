package rmsserver

import (
	"context"
	"net"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// deviceResolver canonicalises the host names of the endpoints the engine
// is told about (hw.CanonicalAddr bounds each look-up).
var deviceResolver hw.Resolver = net.DefaultResolver

// devicesOf returns a node's canonical device keys: the job engine holds
// them with the node, so a device sent under another name is still busy.
func devicesOf(ctx context.Context, n hw.Node) []string {
	return n.DeviceKeys(ctx, deviceResolver)
}

// nodeRefs are the engine's references to nodes, with their device keys
// (resolved side by side).
func nodeRefs(ctx context.Context, nodes []hw.Node) []messages.NodeRef {
	keys := hw.DeviceKeysOf(ctx, deviceResolver, nodes)
	out := make([]messages.NodeRef, len(nodes))
	for i, n := range nodes {
		out[i] = messages.NodeRef{RackID: n.RackID, NodeID: n.ID, Devices: keys[i]}
	}
	return out
}

// cutsShelfOutput says whether op on node n can cut a power shelf's
// output, and so needs the rack's power domain: every operation on a
// power shelf but switching it on. Compute trays and switches only hold
// themselves. (A shelf's firmware activation restarts its management
// controller, Manager.Reset, not its outputs: it holds the shelf only.)
func cutsShelfOutput(op platform.PowerOp) func(hw.Node) bool {
	return func(n hw.Node) bool {
		return n.Type.Kind() == hw.KindPowerShelf && op != platform.PowerOn && op != platform.PowerForceOn
	}
}
