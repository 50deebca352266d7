package fabricsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
)

func TestCheckRefusesBadRequests(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Request)
		want string
	}{
		"empty topology": {func(q *Request) { q.Topology = "  " }, "config.topology_type is required"},
		"no switches":    {func(q *Request) { q.Switches = nil }, "nodes is required"},
		"duplicate config": {func(q *Request) {
			q.Extra = []fabric.ConfigEntry{{File: "f", Key: "k", Value: "1"}, {File: "g", Key: "k", Value: "2"}, {File: "f", Key: "k", Value: "3"}}
		}, "config.extra_static_configs[2]: duplicate"},
		"topology as extra config": {func(q *Request) {
			q.Extra = []fabric.ConfigEntry{{File: fabric.FileFM, Key: fabric.KeyTopology, Value: "x"}}
		},
			"is the topology"},
		"config without key": {func(q *Request) { q.Extra = []fabric.ConfigEntry{{File: "f", Value: "1"}} }, "config_file_name and key are required"},
		"compute node":       {func(q *Request) { q.Switches[1].Type = hw.ComputeGB200Nvidia }, "node s2 is a compute, not a switch"},
		"node twice":         {func(q *Request) { q.Switches[2].ID = "s1" }, "node s1 is listed twice"},
		"two racks":          {func(q *Request) { q.Switches[3].RackID = "rack-2" }, "more than one rack"},
		"no host endpoint":   {func(q *Request) { q.Switches[0].Host = nil }, "switch s1 has no host_endpoint"},
		"unknown primary":    {func(q *Request) { q.Primary = "s9" }, `primary_switch_node_id "s9" is not one of`},
		"secondary not an IP": {func(q *Request) { q.Switches[0].AdditionalHosts = []hw.Endpoint{{HostName: "sw1-b"}} },
			"additional_host_endpoints[0].interface.ip_address"},
		"secondary twice": {func(q *Request) {
			q.Switches[0].AdditionalHosts = []hw.Endpoint{{IP: "10.1.0.1"}}
			q.Switches[2].AdditionalHosts = []hw.Endpoint{{IP: "10.1.0.1"}}
		}, "secondary node IP 10.1.0.1 is given to both s1 and s3"},
		"secondary is a primary": {func(q *Request) { q.Switches[0].AdditionalHosts = []hw.Endpoint{{IP: "10.0.0.4"}} },
			"secondary node IP 10.0.0.4 of s1 is the primary address of s4"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newTestRack()
			req := r.request()
			tc.edit(&req)
			_, err := Check(req)
			var inv *InvalidError
			if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v, want an InvalidError containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckLayout(t *testing.T) {
	switches := make([]hw.Node, NVL72SwitchTrays)
	for i := range switches {
		switches[i] = hw.Node{ID: fmt.Sprintf("sw%d", i+1), RackID: "r", Type: hw.SwitchGB200Nvidia}
	}
	compute := make([]hw.Node, NVL72ComputeTrays)
	for i := range compute {
		compute[i] = hw.Node{ID: fmt.Sprintf("c%d", i+1), RackID: "r", Type: hw.ComputeGB200Nvidia}
	}
	full := func() *Layout { return &Layout{Fabrics: []FabricSpec{{ComputeTrays: 18, SwitchTrays: 9}}} }
	for name, tc := range map[string]struct {
		l          *Layout
		topPrimary bool
		sw, cn     []hw.Node
		hasCompute bool
		want       string // "" accepts
	}{
		"no layout":                   {nil, false, switches, nil, false, ""},
		"compute without layout":      {nil, false, switches, compute, true, "compute_nodes is only valid with layout"},
		"full, no compute":            {full(), false, switches, nil, false, ""},
		"full, every compute tray":    {full(), false, switches, compute, true, ""},
		"request primary with layout": {full(), true, switches, nil, false, "primary_switch_node_id must be absent with layout"},
		"no fabric":                   {&Layout{}, false, switches, nil, false, "at least one fabric"},
		"two fabrics": {&Layout{Fabrics: []FabricSpec{{ComputeTrays: 8, SwitchTrays: 4}, {ComputeTrays: 8, SwitchTrays: 4}}}, false, switches, nil, false,
			"layout with 2 fabrics is not supported"},
		"partial fabric": {&Layout{Fabrics: []FabricSpec{{ComputeTrays: 16, SwitchTrays: 9}}}, false, switches, nil, false,
			"16 compute trays and 9 switch trays is not supported"},
		"zero size":        {&Layout{Fabrics: []FabricSpec{{SwitchTrays: 9}}}, false, switches, nil, false, "must be positive"},
		"missing switches": {full(), false, switches[:8], nil, false, "got 8 switches, an NVL72 rack has 9"},
		"missing compute":  {full(), false, switches, compute[:17], true, "got 17, an NVL72 rack has 18"},
		"switch as compute": {full(), false, switches, append(append([]hw.Node(nil), compute[:17]...), switches[0]), true,
			"node sw1 is a switch, not a compute tray"},
		"unknown fabric primary": {&Layout{Fabrics: []FabricSpec{{ComputeTrays: 18, SwitchTrays: 9, Primary: "x"}}}, false, switches, nil, false,
			`primary_switch_node_id "x" is not one of`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := CheckLayout(tc.l, tc.topPrimary, tc.sw, tc.cn, tc.hasCompute)
			var inv *InvalidError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an InvalidError containing %q", err, tc.want)
			}
		})
	}
	pref, err := CheckLayout(&Layout{Fabrics: []FabricSpec{{ComputeTrays: 18, SwitchTrays: 9, Primary: "sw4"}}}, false, switches, nil, false)
	if err != nil || pref != "sw4" {
		t.Errorf("fabric primary preference: %q, %v", pref, err)
	}
}

func TestElectTakesTheLowestSlot(t *testing.T) {
	slots := map[string]*int64{}
	set := func(id string, v int64) { slots[id] = &v }
	set("b", 2)
	set("a", 2)
	set("c", 7)
	nodes := []hw.Node{{ID: "u"}, {ID: "c"}, {ID: "b"}, {ID: "a"}} // u is unplaced
	slot := func(_ context.Context, n hw.Node) (*int64, error) { return slots[n.ID], nil }
	got, err := Elect(context.Background(), slot, nodes, false)
	if err != nil || got.ID != "a" {
		t.Errorf("elected %q, %v; want a (slot 2, first by id)", got.ID, err)
	}
	got, err = Elect(context.Background(), slot, nodes[:1], false)
	if err != nil || got.ID != "u" {
		t.Errorf("only unplaced: %q, %v", got.ID, err)
	}
	if _, err := Elect(context.Background(), slot, nodes, true); err == nil || !strings.Contains(err.Error(), "switch u: it reports no slot number") {
		t.Errorf("strict election with an unplaced switch: %v", err)
	}
	broken := func(context.Context, hw.Node) (*int64, error) { return nil, errInjected }
	if _, err := Elect(context.Background(), broken, nodes, false); !errors.Is(err, errInjected) {
		t.Errorf("a failed read: %v", err)
	}
}
