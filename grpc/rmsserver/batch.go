package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// eachNode runs op on every node of a batch: a node that repeats an
// earlier (rack, node) pair or fails check is refused without I/O; the rest
// run concurrently through the node runner. op receives the node's index in
// nodes. Each failed node is recorded as an in-band failure of the RPC.
func (m *rackManager) eachNode(ctx context.Context, nodes []hw.Node, check func(hw.Node) error, op nodeops.Op) []nodeResult {
	results, run := admitNodes(nodes, check)
	m.runNodes(ctx, nodes, results, run, op)
	m.failedNodes(ctx, nodes, results)
	return results
}

// eachLeasedNode is eachNode for operations that change hardware: the
// admitted nodes are leased from the job engine first, and a node the
// engine refuses (a job holds it) fails with the engine's reason. A node
// for which domain (when not nil) is true also takes its rack's power
// domain.
func (m *rackManager) eachLeasedNode(ctx context.Context, operation string, nodes []hw.Node, check func(hw.Node) error,
	domain func(hw.Node) bool, op nodeops.Op) ([]nodeResult, error) {
	results, run := admitNodes(nodes, check)
	if len(run) == 0 { // every node failed its checks: nothing to hold
		m.failedNodes(ctx, nodes, results)
		return results, nil
	}
	admitted := make([]hw.Node, len(run))
	for j, i := range run {
		admitted[j] = nodes[i]
	}
	l, err := m.leaseWith(ctx, messages.AcquireLease{Operation: operation, Partial: true}, admitted, domain)
	if err != nil {
		return nil, err
	}
	defer l.release()
	granted := run[:0:0]
	for j, i := range run {
		if l.refused[j] != nil {
			results[i].err = l.refused[j]
			continue
		}
		granted = append(granted, i)
	}
	m.runNodes(l.ctx, nodes, results, granted, op)
	m.failedNodes(ctx, nodes, results)
	return results, nil
}

// admitNodes checks a batch's nodes without I/O: it returns one result per
// node (failed for a missing rack_id or node_id, a repeated (rack, node)
// pair, an endpoint address that cannot be dialled as given, or a failed
// check) and the indexes of the nodes to run.
func admitNodes(nodes []hw.Node, check func(hw.Node) error) ([]nodeResult, []int) {
	results := make([]nodeResult, len(nodes))
	seen := map[hw.Ref]bool{}
	var run []int
	for i, n := range nodes {
		results[i].nodeID = n.ID
		if results[i].err = identityProblem(n); results[i].err != nil {
			continue
		}
		if seen[n.Ref()] {
			results[i].err = fmt.Errorf("duplicate target rack_id/node_id: %s/%s", n.RackID, n.ID)
			continue
		}
		seen[n.Ref()] = true
		results[i].err = addressProblem(n)
		if results[i].err == nil && check != nil {
			results[i].err = check(n)
		}
		if results[i].err == nil {
			run = append(run, i)
		}
	}
	return results, run
}

// runNodes runs op on nodes[run...] through the node runner and records
// each error in results.
func (m *rackManager) runNodes(ctx context.Context, nodes []hw.Node, results []nodeResult, run []int, op nodeops.Op) {
	admitted := make([]hw.Node, len(run))
	for j, i := range run {
		admitted[j] = nodes[i]
	}
	errs := m.deps.Nodes.Each(ctx, admitted, func(ctx context.Context, j int, d platform.Device) error {
		return op(ctx, run[j], d)
	})
	for j, i := range run {
		results[i].err = errs[j]
	}
}

// identityProblem refuses a batch node without a rack_id or node_id: a
// caller could not tell its result from another's.
func identityProblem(n hw.Node) error {
	rack, node := strings.TrimSpace(n.RackID) == "", strings.TrimSpace(n.ID) == ""
	switch {
	case rack && node:
		return errors.New("rack_id and node_id are required")
	case rack:
		return errors.New("rack_id is required")
	case node:
		return errors.New("node_id is required")
	}
	return nil
}

// addressProblem refuses a batch node with an endpoint whose address is
// neither an IP address nor a host name: nothing is dialled or resolved
// for it.
func addressProblem(n hw.Node) error {
	check := func(name string, ep *hw.Endpoint) error {
		if ep == nil {
			return nil
		}
		if p := ep.AddressProblem(); p != "" {
			return fmt.Errorf("%s %s", name, p)
		}
		return nil
	}
	if err := check("bmc_endpoint", n.BMC); err != nil {
		return err
	}
	if err := check("host_endpoint", n.Host); err != nil {
		return err
	}
	for i := range n.AdditionalHosts {
		if err := check(fmt.Sprintf("additional_host_endpoints[%d]", i), &n.AdditionalHosts[i]); err != nil {
			return err
		}
	}
	return nil
}
