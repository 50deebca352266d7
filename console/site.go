package console

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/powerview"
	"github.com/rmsd/rmsd/messages"
)

// cell is one node as the site and rack pages draw it.
type cell struct {
	NodeID string
	Kind   string // compute, switch, shelf
	Type   string
	// Power is on, off, unknown, or "" when rmsd has never learned it.
	Power string
	// Holder is the job holding the node (the top-level one), Operation
	// the operation's lease holding it instead; both empty when free.
	Holder    string
	Operation string
	Hue       int
	Slot      int64
	Firmware  []platform.Firmware
	LastError string
	// LastErrorJob is the failed job LastError comes from.
	LastErrorJob string
}

// Label is the cell's short text.
func (c cell) Label() string {
	if i := strings.LastIndexByte(c.NodeID, '-'); i >= 0 && i < len(c.NodeID)-1 {
		return c.NodeID[i+1:]
	}
	return c.NodeID
}

// PowerText is the power state as words.
func (c cell) PowerText() string {
	if c.Power == "" {
		return "not read yet"
	}
	return c.Power
}

// rackTile is one rack on the site page.
type rackTile struct {
	ID      string
	Family  string
	Shelves []cell
	Trays   []cell
	// Holder is the job holding the rack's power domain (a cold reboot).
	Holder string
	Hue    int
	Nodes  int
	Held   int
	On     int
}

// state is what the site and rack pages are drawn from, read once per
// render: the registered nodes, the registry's holds and the power view.
type state struct {
	nodes []hw.Node
	holds map[hw.Ref]messages.Hold
	power *powerview.View
	// unreachable names the racks whose holds were not read (cluster
	// mode).
	unreachable []string
}

func (c *Console) readState(ctx context.Context) (state, error) {
	holds, err := c.deps.Jobs.Holds(ctx)
	missed, err := partly(err)
	if err != nil {
		return state{}, err
	}
	st := state{nodes: c.deps.Racks.Nodes(), holds: make(map[hw.Ref]messages.Hold, len(holds)), power: c.deps.Power, unreachable: missed}
	for _, h := range holds {
		st.holds[hw.Ref{RackID: h.RackID, NodeID: h.NodeID}] = h
	}
	return st, nil
}

// cellOf draws one node.
func (st state) cellOf(n hw.Node) cell {
	c := cell{NodeID: n.ID, Kind: kindName(n.Type.Kind()), Type: n.Type.Name(), Hue: -1}
	if e, ok := st.power.Get(n.RackID, n.ID); ok {
		c.Power = strings.ToLower(string(e.State))
		c.Slot, c.Firmware = e.Slot, e.Firmware
	}
	if h, ok := st.holds[n.Ref()]; ok {
		c.Holder, c.Operation = h.Job, h.Operation
		c.Hue = hue(h.Holder)
		if h.Job != "" {
			c.Hue = hue(h.Job)
		}
	}
	return c
}

func kindName(k hw.Kind) string {
	switch k {
	case hw.KindCompute:
		return "compute"
	case hw.KindSwitch:
		return "switch"
	case hw.KindPowerShelf:
		return "shelf"
	default:
		return "other"
	}
}

// tiles groups the nodes by rack, every registered rack a tile.
func (st state) tiles(rackIDs []string) []rackTile {
	byRack := map[string][]hw.Node{}
	for _, n := range st.nodes {
		byRack[n.RackID] = append(byRack[n.RackID], n)
	}
	out := make([]rackTile, 0, len(rackIDs))
	for _, id := range rackIDs {
		t := rackTile{ID: id, Hue: -1}
		for _, p := range physicalOrder(st, byRack[id]) {
			c := p.Cell
			if c.Kind == "shelf" {
				t.Shelves = append(t.Shelves, c)
			} else {
				t.Trays = append(t.Trays, c)
			}
			t.Nodes++
			if c.Holder != "" || c.Operation != "" {
				t.Held++
			}
			if c.Power == "on" {
				t.On++
			}
		}
		if nodes := byRack[id]; len(nodes) > 0 {
			t.Family = string(nodes[0].Type.Family())
		}
		if h, ok := st.holds[hw.Ref{RackID: id}]; ok {
			t.Holder, t.Hue = h.Job, hue(h.Job)
			if h.Job == "" {
				t.Holder, t.Hue = h.Operation, hue(h.Holder)
			}
		}
		out = append(out, t)
	}
	return out
}

func (c *Console) site(w http.ResponseWriter, r *http.Request) {
	st, err := c.readState(r.Context())
	if err != nil {
		c.fail(w, r, http.StatusServiceUnavailable, "the job registry did not answer", err)
		return
	}
	racks := c.deps.Racks.Racks()
	slices.Sort(racks)
	c.render(w, r, "site", view{Title: "Site", Events: Prefix + "events?topic=site", Data: st.tiles(racks), Unreachable: st.unreachable})
}
