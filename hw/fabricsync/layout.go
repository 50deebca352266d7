package fabricsync

import (
	"github.com/rmsd/rmsd/hw"
)

// The physical capacity of an NVL72 rack, the only topology rmsd lays out.
const (
	NVL72ComputeTrays = 18
	NVL72SwitchTrays  = 9
)

// Layout is the requested arrangement of fabrics in the supplied
// inventory.
type Layout struct {
	Fabrics []FabricSpec
}

// FabricSpec is one requested fabric.
type FabricSpec struct {
	ComputeTrays, SwitchTrays uint32
	// Primary is the fabric's primary preference, "" for none.
	Primary string
}

// Members is the selection for one requested fabric.
type Members struct {
	Compute  []string
	Switches []string
	Primary  string
}

// CheckLayout validates a layout against the inventory. rmsd supports
// what it can promise on an NVL72 rack: one fabric of the rack's complete
// capacity (18 compute trays, 9 switch trays) over every submitted switch,
// with compute inventory either omitted or naming every compute tray. A
// request-level primary with a layout, or compute nodes without one, is
// refused. It returns the fabric's primary preference ("" for none).
func CheckLayout(l *Layout, topPrimary bool, switches, compute []hw.Node, hasCompute bool) (string, error) {
	if l == nil {
		if hasCompute {
			return "", invalid("compute_nodes is only valid with layout")
		}
		return "", nil
	}
	switch {
	case topPrimary:
		return "", invalid("primary_switch_node_id must be absent with layout; set the fabric's primary_switch_node_id instead")
	case len(l.Fabrics) == 0:
		return "", invalid("layout needs at least one fabric")
	case len(l.Fabrics) > 1:
		return "", invalid("layout with %d fabrics is not supported: rmsd supports one fabric of the rack's complete capacity (%d compute trays, %d switch trays)",
			len(l.Fabrics), NVL72ComputeTrays, NVL72SwitchTrays)
	}
	f := l.Fabrics[0]
	switch {
	case f.ComputeTrays == 0 || f.SwitchTrays == 0:
		return "", invalid("layout.fabrics[0]: compute_tray_count and switch_tray_count must be positive")
	case f.ComputeTrays != NVL72ComputeTrays || f.SwitchTrays != NVL72SwitchTrays:
		return "", invalid("layout.fabrics[0] of %d compute trays and %d switch trays is not supported: rmsd supports one fabric of the rack's complete capacity (%d compute trays, %d switch trays)",
			f.ComputeTrays, f.SwitchTrays, NVL72ComputeTrays, NVL72SwitchTrays)
	case len(switches) != NVL72SwitchTrays:
		return "", invalid("layout needs every physical switch tray in nodes: got %d switches, an NVL72 rack has %d", len(switches), NVL72SwitchTrays)
	}
	if f.Primary != "" {
		found := false
		for _, s := range switches {
			found = found || s.ID == f.Primary
		}
		if !found {
			return "", invalid("layout.fabrics[0].primary_switch_node_id %s is not one of the submitted switches", hw.QuoteShort(f.Primary))
		}
	}
	if !hasCompute {
		return f.Primary, nil
	}
	if len(compute) != NVL72ComputeTrays {
		return "", invalid("compute_nodes must name every compute tray of the rack for a full-capacity fabric: got %d, an NVL72 rack has %d",
			len(compute), NVL72ComputeTrays)
	}
	seen := map[string]bool{}
	for _, n := range compute {
		switch {
		case n.Type.Kind() != hw.KindCompute:
			return "", invalid("compute_nodes: node %s is a %s, not a compute tray", n.ID, n.Type.Kind())
		case seen[n.ID]:
			return "", invalid("compute_nodes: node %s is listed twice", n.ID)
		case len(switches) > 0 && n.RackID != switches[0].RackID:
			return "", invalid("compute_nodes: node %s is not in rack %s of the switches", n.ID, hw.QuoteShort(switches[0].RackID))
		}
		seen[n.ID] = true
	}
	return f.Primary, nil
}
