package coldreboot

import (
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw"
)

// Plan is an admitted cold reboot: the rack and its nodes by role.
type Plan struct {
	RackID   string
	Compute  []hw.Node
	Switches []hw.Node
	Shelves  []hw.Node
	Timing   Timing
	// LeftOut are the registered nodes of the rack the request did not
	// list (see LeaveOut): the runbook puts back on the trays among them
	// that were On.
	LeftOut []hw.Node
}

// Admission errors of Check.
var (
	// ErrNodesRefused is returned when some nodes cannot take part (each
	// says why in nodeErrs).
	ErrNodesRefused = errors.New("coldreboot: nodes refused")
	// ErrNotARack is returned when the nodes are fine one by one but do not
	// make a rack the runbook can drive.
	ErrNotARack = errors.New("coldreboot: request is not one rack with power shelves, compute trays and switches")
)

// Check validates the nodes of a request: one rack; at least one power
// shelf, one compute tray and one switch; a BMC endpoint on every node and a
// host endpoint on every switch; no node twice. nodeErrs has one entry per
// node (nil where the node is fine); err is set when the request as a whole
// cannot run, and then no job may start.
func Check(nodes []hw.Node, timing Timing) (p Plan, nodeErrs []error, err error) {
	nodeErrs = make([]error, len(nodes))
	seen := map[hw.Ref]bool{}
	failed := 0
	first := -1
	for i, n := range nodes {
		if p.RackID == "" {
			p.RackID = n.RackID
		}
		switch {
		case n.ID == "":
			nodeErrs[i] = errors.New("node_id is empty")
		case n.RackID == "":
			nodeErrs[i] = errors.New("rack_id is empty")
		case n.RackID != p.RackID:
			nodeErrs[i] = fmt.Errorf("node is in rack %s but the cold reboot is for rack %s; one rack per request", n.RackID, p.RackID)
		case seen[n.Ref()]:
			nodeErrs[i] = fmt.Errorf("duplicate target rack_id/node_id: %s/%s", n.RackID, n.ID)
		case n.BMC == nil || n.BMC.Host() == "":
			nodeErrs[i] = errors.New("bmc_endpoint is required for a cold reboot")
		case n.Type.Kind() == hw.KindSwitch && (n.Host == nil || n.Host.Host() == ""):
			nodeErrs[i] = errors.New("switches need a host_endpoint (NVOS) for a cold reboot")
		}
		seen[n.Ref()] = true
		if nodeErrs[i] != nil {
			if failed == 0 {
				first = i
			}
			failed++
			continue
		}
		switch n.Type.Kind() {
		case hw.KindCompute:
			p.Compute = append(p.Compute, n)
		case hw.KindSwitch:
			p.Switches = append(p.Switches, n)
		case hw.KindPowerShelf:
			p.Shelves = append(p.Shelves, n)
		}
	}
	p.Timing = timing
	switch {
	case failed > 0:
		return p, nodeErrs, fmt.Errorf("%w: %d of %d nodes cannot take part; node %q: %w",
			ErrNodesRefused, failed, len(nodes), nodes[first].ID, nodeErrs[first])
	case len(p.Shelves) == 0 || len(p.Compute) == 0 || len(p.Switches) == 0:
		return p, nodeErrs, fmt.Errorf("%w: got %d power shelves, %d compute trays and %d switches; at least one of each is needed",
			ErrNotARack, len(p.Shelves), len(p.Compute), len(p.Switches))
	}
	return p, nodeErrs, nil
}
