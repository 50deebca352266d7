package console

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/messages"
)

// position is one place in a rack's front view: a tray slot or a shelf bay.
type position struct {
	// Label is what the front view prints beside it ("slot 11", "PS 3").
	Label string
	// Reported is true when the device reported its slot itself; false
	// when the console placed it by the NVL72 layout.
	Reported bool
	Cell     cell
}

// NVL72 front view: shelves 1-4 above the trays, shelves 5-8 below; tray
// slots 1-10 compute, 11-19 switches, 20-27 compute.
const (
	nvlComputeTop   = 10
	nvlSwitches     = 9
	nvlShelvesAbove = 4
)

// physicalOrder lays out a rack's nodes as its front shows them, top to
// bottom. A tray with a slot its device reported takes it; the others are
// placed by the NVL72 layout (compute trays in id order fill slots 1-10
// then 20-27, switches 11-19); shelves go in id order, half above the
// trays and half below.
func physicalOrder(st state, nodes []hw.Node) []position {
	var shelves, trays []position
	var computes, switches int
	for _, n := range nodes {
		c := st.cellOf(n)
		p := position{Cell: c}
		switch c.Kind {
		case "shelf":
			shelves = append(shelves, p)
			continue
		case "compute":
			computes++
			p.Cell.Slot = canonicalSlot(c.Slot, computes, func(i int64) int64 {
				if i <= nvlComputeTop {
					return i
				}
				return i + nvlSwitches
			})
		case "switch":
			switches++
			p.Cell.Slot = canonicalSlot(c.Slot, switches, func(i int64) int64 { return nvlComputeTop + i })
		}
		p.Reported = c.Slot > 0
		trays = append(trays, p)
	}
	slices.SortStableFunc(trays, func(a, b position) int { return cmp.Compare(a.Cell.Slot, b.Cell.Slot) })
	for i := range trays {
		trays[i].Label = "slot " + itoa(trays[i].Cell.Slot)
	}
	for i := range shelves {
		shelves[i].Label = "PS " + itoa(int64(i+1))
	}
	above := min(nvlShelvesAbove, (len(shelves)+1)/2)
	out := make([]position, 0, len(nodes))
	out = append(out, shelves[:above]...)
	out = append(out, trays...)
	return append(out, shelves[above:]...)
}

// canonicalSlot is the reported slot, else the layout's slot for the
// nth tray of its kind.
func canonicalSlot(reported int64, nth int, layout func(int64) int64) int64 {
	if reported > 0 {
		return reported
	}
	return layout(int64(nth))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// rackView is the rack page's data.
type rackView struct {
	ID        string
	Family    string
	Positions []position
	Holder    string
	Hue       int
}

func (c *Console) rack(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("rack")
	nodes, err := c.deps.Racks.RackNodes(id)
	if errors.Is(err, racks.ErrRackNotFound) {
		c.fail(w, r, http.StatusNotFound, "no such rack", nil)
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "the rack registry did not answer", err)
		return
	}
	st, err := c.readState(r.Context())
	if err != nil {
		c.fail(w, r, http.StatusServiceUnavailable, "the job registry did not answer", err)
		return
	}
	listed, err := c.deps.Jobs.List(r.Context(), messages.ListJobs{RackID: id})
	jobs := listed.Jobs
	missed, err := partly(err)
	if err != nil {
		c.fail(w, r, http.StatusServiceUnavailable, "the job registry did not answer", err)
		return
	}
	last := lastErrors(jobs, id)
	v := rackView{ID: id, Positions: physicalOrder(st, nodes), Hue: -1}
	for i := range v.Positions {
		p := &v.Positions[i].Cell
		if j, ok := last[p.NodeID]; ok {
			p.LastError, p.LastErrorJob = j.ErrorMessage, j.ID
		}
	}
	if len(nodes) > 0 {
		v.Family = string(nodes[0].Type.Family())
	}
	if h, ok := st.holds[hw.Ref{RackID: id}]; ok {
		v.Holder, v.Hue = h.Job, hue(h.Job)
	}
	c.render(w, r, "rack", view{Title: "Rack " + id, Events: Prefix + "events?topic=rack&rack=" + urlQuery(id), Data: v,
		Unreachable: append(st.unreachable, missed...)})
}

// lastErrors is, per node of the rack, its newest job that failed since
// its newest success (jobs come newest first).
func lastErrors(jobs []messages.JobSnapshot, rackID string) map[string]messages.JobSnapshot {
	out := map[string]messages.JobSnapshot{}
	decided := map[string]bool{}
	for _, j := range jobs {
		if j.RackID != rackID || j.NodeID == "" || decided[j.NodeID] || !j.State.IsTerminal() {
			continue
		}
		decided[j.NodeID] = true
		if j.State == messages.StateFailed {
			out[j.NodeID] = j
		}
	}
	return out
}
