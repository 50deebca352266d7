package coldreboot

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

// Left-out nodes. Switching the shelves off cuts power to every tray of
// the rack, listed or not. So that a tray the request did not list is not
// left dark, the runbook reads the power state of every registered tray of
// the rack it was not given (through its BMC) before the shelves go off,
// waits for their BMCs with the listed ones, and powers on again those that
// were On. result_json's left_out says, per node, what was found and done.

// LeftOut is one registered node of the rack that the request did not list,
// as result_json reports it.
type LeftOut struct {
	NodeID string `json:"node_id"`
	Type   string `json:"type"`
	// PowerBefore is the power state read before the shelves went off
	// (On, Off), "unknown" when it could not be read, empty when it was
	// not read (a power shelf, a tray without a BMC endpoint, a run that
	// ended before the shelves went off).
	PowerBefore string `json:"power_before,omitempty"`
	// Action is what the run did with the node.
	Action string `json:"action"`
}

// LeaveOut sets the plan's left-out nodes: the registered nodes of its rack
// (registered, from the rack registry) that the request did not list.
func (p *Plan) LeaveOut(registered []hw.Node) {
	listed := map[string]bool{}
	for _, group := range [][]hw.Node{p.Compute, p.Switches, p.Shelves} {
		for _, n := range group {
			listed[n.ID] = true
		}
	}
	p.LeftOut = nil
	for _, n := range registered {
		if n.RackID == p.RackID && !listed[n.ID] {
			p.LeftOut = append(p.LeftOut, n)
		}
	}
}

// leftOutState is what the run knows of one left-out node.
type leftOutState struct {
	node   hw.Node
	before platform.PowerState
	read   bool // before was read
	report LeftOut
}

// newLeftOut starts the records of the plan's left-out nodes.
func newLeftOut(nodes []hw.Node) []*leftOutState {
	out := make([]*leftOutState, len(nodes))
	for i, n := range nodes {
		out[i] = &leftOutState{node: n, report: LeftOut{NodeID: n.ID, Type: n.Type.String()}}
	}
	return out
}

// isTray reports whether n loses power with the shelves and has a BMC to
// read it through.
func isTray(n hw.Node) bool {
	k := n.Type.Kind()
	return (k == hw.KindCompute || k == hw.KindSwitch) && n.BMC != nil && n.BMC.Host() != ""
}

// recordLeftOut reads the power state of every left-out tray before the
// shelves go off.
func (r *run) recordLeftOut(ctx context.Context) map[string]string {
	var trays []*leftOutState
	var nodes []hw.Node
	for _, l := range r.leftOut {
		switch {
		case l.node.Type.Kind() == hw.KindPowerShelf:
			l.report.Action = "power shelf not in the request: not switched"
		case !isTray(l.node):
			l.report.Action = "no BMC endpoint: power state not read, not powered on afterwards"
		default:
			trays, nodes = append(trays, l), append(nodes, l.node)
		}
	}
	if len(trays) == 0 {
		return nil
	}
	states, errs := r.powerStates(ctx, nodes)
	on := 0
	for i, l := range trays {
		l.read = true
		l.before = states[i]
		switch {
		case errs[i] != nil || states[i] == platform.PowerStateUnknown:
			l.before = platform.PowerStateUnknown
			l.report.PowerBefore = "unknown"
			l.report.Action = "power state could not be read before the shelves went off: not powered on afterwards"
		default:
			l.report.PowerBefore = string(states[i])
			if states[i] == platform.PowerStateOn {
				on++
			}
		}
	}
	return map[string]string{"left_out_trays": fmt.Sprint(len(trays)), "left_out_on": fmt.Sprint(on)}
}

// leftOutOn are the left-out trays that were On before the shelves went
// off.
func (r *run) leftOutOn() []*leftOutState {
	var out []*leftOutState
	for _, l := range r.leftOut {
		if l.read && l.before == platform.PowerStateOn {
			out = append(out, l)
		}
	}
	return out
}

// leftOutOnNodes are the nodes of leftOutOn.
func (r *run) leftOutOnNodes() []hw.Node {
	var out []hw.Node
	for _, l := range r.leftOutOn() {
		out = append(out, l.node)
	}
	return out
}

// restoreLeftOut powers on again every left-out tray that was On before
// and is not On now; it returns the failures by node id.
func (r *run) restoreLeftOut(ctx context.Context) map[string]error {
	on := r.leftOutOn()
	failed := map[string]error{}
	if len(on) == 0 {
		return failed
	}
	nodes := r.leftOutOnNodes()
	errs := r.deps.Nodes.Each(ctx, nodes, func(ctx context.Context, i int, d platform.Device) error {
		st, err := d.PowerState(ctx)
		if err == nil && st == platform.PowerStateOn {
			on[i].report.Action = "was On: came back On with the rack"
			return nil
		}
		if err := d.SetPower(ctx, platform.PowerOn); err != nil {
			return err
		}
		on[i].report.Action = "was On: powered on again after the shelves came back"
		return nil
	})
	for i, err := range errs {
		if err != nil {
			on[i].report.Action = fmt.Sprintf("was On: power on after the shelves came back failed: %v", err)
			failed[nodes[i].ID] = err
		}
	}
	return failed
}

// leftOutReport is result_json's left_out: every left-out node with what
// was done, those the run never got to saying so.
func (r *run) leftOutReport() []LeftOut {
	out := make([]LeftOut, 0, len(r.leftOut))
	for _, l := range r.leftOut {
		rep := l.report
		switch {
		case rep.Action != "":
		case !l.read:
			rep.Action = "not touched: the run ended before the shelves went off"
		case l.before == platform.PowerStateOn:
			rep.Action = "was On: not powered on, the run ended before its power-on stage; power it on once its BMC answers"
		default:
			rep.Action = "was " + string(l.before) + ": left off"
		}
		out = append(out, rep)
	}
	return out
}
