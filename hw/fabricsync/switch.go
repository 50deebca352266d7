package fabricsync

import (
	"context"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
)

// Switch is the part of the fabric client of one switch (*fabric.Switch)
// the reconcile drives. Its errors name the switch and the step, never a
// credential.
type Switch interface {
	Cluster(ctx context.Context) (fabric.ClusterState, error)
	SetCluster(ctx context.Context, enabled bool) (fabric.ClusterState, error)
	App(ctx context.Context, app string) (fabric.AppStatus, error)
	SetAppManager(ctx context.Context, app string, enabled bool) error
	RestartApp(ctx context.Context, app string) error
	NodeIPs(ctx context.Context) (fabric.NodeIPs, error)
	SetNodeIPs(ctx context.Context, want fabric.NodeIPs) error
	Hello(ctx context.Context) error
	StaticConfig(ctx context.Context, keys []fabric.ConfigKey) ([]fabric.ConfigEntry, error)
	SetStaticConfig(ctx context.Context, entries []fabric.ConfigEntry) error
	WaitConfigured(ctx context.Context) (fabric.AppStatus, error)
	NMXMTLS(ctx context.Context) (fabric.MTLSBinding, error)
	SetNMXMTLS(ctx context.Context, b fabric.MTLSBinding) error
}

// The fabric client is a Switch as it is.
var _ Switch = (*fabric.Switch)(nil)

// Deps are what a reconcile runs on.
type Deps struct {
	// Open builds the fabric client of one switch from its node (host
	// endpoint and credentials). A client with a Close method is closed
	// when the job ends.
	Open func(n hw.Node) (Switch, error)
	// Slot reads the slot number of a switch in its rack; nil means the
	// switch reports none.
	Slot func(ctx context.Context, n hw.Node) (*int64, error)
	// Render turns the status read back at the end into result_json.
	Render func(Status) (string, error)
}

// Status is the fabric as the job reads it back at the end: the shape of
// rack_manager.ScaleUpFabricStatus.
type Status struct {
	Topology string
	// Extra are the request's extra static configs and the bridged
	// descriptor entries, as the primary reports them.
	Extra    []fabric.ConfigEntry
	Switches []SwitchStatus
}

// SwitchStatus is one switch of a Status, in request order.
type SwitchStatus struct {
	NodeID string
	// Enabled is whether the switch's fabric cluster runs.
	Enabled bool
	// ManagerStatus is the controller app's status (ok, not ok, stopped;
	// "" when the switch has no controller app).
	ManagerStatus string
	Error         string
}

// SentinelNode is the node id the reconcile job holds in the job engine:
// one per rack, so a second reconcile of the rack is refused while one
// runs.
func SentinelNode(rackID string) string { return rackID + ":scale-up-fabric" }
