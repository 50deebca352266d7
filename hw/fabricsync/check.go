package fabricsync

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
)

// Request is a reconcile as the caller asked for it.
type Request struct {
	// Switches are every submitted switch, in request order.
	Switches []hw.Node
	// Primary is the requested primary's node id; "" elects the switch at
	// the lowest slot.
	Primary string
	// Topology is config.topology_type (fm_config MNNVL_TOPOLOGY).
	Topology string
	// Extra are config.extra_static_configs, in order.
	Extra []fabric.ConfigEntry
	// Bridge are the fm_config:<key> descriptor attributes of each node
	// (key without the prefix → value), by node id. Only the primary's
	// are used.
	Bridge map[string]map[string]string
	// Insecure is insecure_switch: NMX-C mTLS is unset instead of
	// restored.
	Insecure bool
}

// Plan is a checked request.
type Plan struct {
	req    Request
	rackID string
	// secondary is the wanted secondary node IP by node id, for the nodes
	// that name one.
	secondary map[string]string
}

// RackID is the rack every switch of the plan is in.
func (p Plan) RackID() string { return p.rackID }

// WithPrimary returns the plan with its primary fixed (a layout elects it
// at admission). id must be one of the plan's switches.
func (p Plan) WithPrimary(id string) Plan {
	p.req.Primary = id
	return p
}

// InvalidError is a request refused before any job: INVALID_ARGUMENT.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

func invalid(format string, a ...any) error { return &InvalidError{Reason: fmt.Sprintf(format, a...)} }

// Check validates r: a non-empty topology, extra static configs with a
// file and a key each and no (file, key) twice (nor the topology's),
// switches only, each with a host endpoint, all in one rack, no node id
// twice, a requested primary among them, secondary node IPs (the first
// additional host endpoint's ip_address) that are IP addresses, unique
// and none a switch's host address.
func Check(r Request) (Plan, error) {
	if strings.TrimSpace(r.Topology) == "" {
		return Plan{}, invalid("config.topology_type is required")
	}
	topo := fabric.ConfigKey{File: fabric.FileFM, Key: fabric.KeyTopology}
	seen := map[fabric.ConfigKey]bool{}
	for i, e := range r.Extra {
		switch {
		case strings.TrimSpace(e.File) == "" || strings.TrimSpace(e.Key) == "":
			return Plan{}, invalid("config.extra_static_configs[%d]: config_file_name and key are required", i)
		case e.Name() == topo:
			return Plan{}, invalid("config.extra_static_configs[%d]: %s %s is the topology; set it with config.topology_type", i, e.File, e.Key)
		case seen[e.Name()]:
			return Plan{}, invalid("config.extra_static_configs[%d]: duplicate (config_file_name, key) (%s, %s)", i, hw.QuoteShort(e.File), hw.QuoteShort(e.Key))
		}
		seen[e.Name()] = true
	}
	if len(r.Switches) == 0 {
		return Plan{}, invalid("nodes is required: the switches of the fabric")
	}
	p := Plan{req: r, rackID: r.Switches[0].RackID, secondary: map[string]string{}}
	ids := map[string]bool{}
	hosts := map[string]string{} // host address → node id
	for _, n := range r.Switches {
		switch {
		case n.ID == "":
			return Plan{}, invalid("every node needs a node_id")
		case ids[n.ID]:
			return Plan{}, invalid("node %s is listed twice", n.ID)
		case n.Type.Kind() != hw.KindSwitch:
			return Plan{}, invalid("node %s is a %s, not a switch: the scale-up fabric is configured on switches only", n.ID, n.Type.Kind())
		case n.RackID != p.rackID:
			return Plan{}, invalid("nodes are in more than one rack (%s and %s): one reconcile configures one rack", hw.QuoteShort(p.rackID), hw.QuoteShort(n.RackID))
		case n.Host == nil || n.Host.Host() == "":
			return Plan{}, invalid("switch %s has no host_endpoint address", n.ID)
		}
		ids[n.ID] = true
		if a, ok := nodeAddr(*n.Host); ok {
			hosts[a] = n.ID
		}
	}
	if r.Primary != "" && !ids[r.Primary] {
		return Plan{}, invalid("primary_switch_node_id %s is not one of the submitted switches", hw.QuoteShort(r.Primary))
	}
	secondaries := map[string]string{}
	for _, n := range r.Switches {
		if len(n.AdditionalHosts) == 0 {
			continue
		}
		raw := n.AdditionalHosts[0].IP
		a, err := netip.ParseAddr(raw)
		if err != nil {
			return Plan{}, invalid("switch %s: additional_host_endpoints[0].interface.ip_address %s is not an IP address", n.ID, hw.QuoteShort(raw))
		}
		ip := a.Unmap().String()
		if other, ok := secondaries[ip]; ok {
			return Plan{}, invalid("secondary node IP %s is given to both %s and %s", ip, other, n.ID)
		}
		if owner, ok := hosts[ip]; ok {
			return Plan{}, invalid("secondary node IP %s of %s is the primary address of %s", ip, n.ID, owner)
		}
		secondaries[ip] = n.ID
		p.secondary[n.ID] = ip
	}
	return p, nil
}

// nodeAddr is the cluster node IP a switch serves on as primary: its host
// endpoint's address, when that is an IP address.
func nodeAddr(e hw.Endpoint) (string, bool) {
	for _, s := range []string{e.IP, e.HostName} {
		if a, err := netip.ParseAddr(s); err == nil {
			return a.Unmap().String(), true
		}
	}
	return "", false
}
