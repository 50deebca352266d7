package racks

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/hw"
)

func bmc(ip string) *hw.Endpoint {
	return &hw.Endpoint{IP: ip, Port: 443, Credentials: hw.UserPass("admin", "pw")}
}

// node is a node with a BMC of its own: its address derives from its
// rack and id (a BMC is registered under one node only).
func node(rack, id string, t hw.NodeType) hw.Node {
	h := fnv.New32a()
	h.Write([]byte(rack + "/" + id))
	s := h.Sum32()
	return hw.Node{ID: id, RackID: rack, Type: t, BMC: bmc(fmt.Sprintf("10.%d.%d.%d", byte(s>>16), byte(s>>8), byte(s)))}
}

func TestCreateRegistersAndIsSafeToRepeat(t *testing.T) {
	r := New(nil)
	nodes := []hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia), node("r1", "s1", hw.SwitchGB200Nvidia)}
	for i := 0; i < 2; i++ {
		for j, err := range r.Create(nodes) {
			if err != nil {
				t.Fatalf("round %d node %d: %v", i, j, err)
			}
		}
	}
	if got := len(r.Nodes()); got != 2 {
		t.Fatalf("%d nodes registered, want 2", got)
	}
	if got := r.Racks(); len(got) != 1 || got[0] != "r1" {
		t.Fatalf("racks = %v", got)
	}
}

func TestCreateRefusesBadNodesAndLeavesNoEmptyRack(t *testing.T) {
	r := New([]string{"prod"})
	noBMC := node("new", "a", hw.ComputeGB200Nvidia)
	noBMC.BMC = nil
	noCreds := node("new", "b", hw.ComputeGB200Nvidia)
	noCreds.BMC = &hw.Endpoint{IP: "10.0.0.2"}
	emptyProfile := node("new", "c", hw.ComputeGB200Nvidia)
	emptyProfile.HasInventoryProfile = true
	unknownProfile := node("new", "d", hw.ComputeGB200Nvidia)
	unknownProfile.HasInventoryProfile, unknownProfile.InventoryProfile = true, "nope"
	errs := r.Create([]hw.Node{noBMC, noCreds, emptyProfile, unknownProfile})
	wants := []string{"bmc_endpoint is required", "bmc_endpoint has no credentials", "inventory_profile is empty", `inventory_profile "nope" is not configured`}
	for i, want := range wants {
		if !errors.Is(errs[i], ErrInvalidNode) || !strings.Contains(errs[i].Error(), want) {
			t.Errorf("node %d: %v, want %q", i, errs[i], want)
		}
	}
	if len(r.Racks()) != 0 {
		t.Fatalf("a rack was left behind: %v", r.Racks())
	}
}

func TestCreateRefusesAnotherFamilyAndDuplicatesAndConflicts(t *testing.T) {
	r := New([]string{"prod"})
	if err := r.Create([]hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia)})[0]; err != nil {
		t.Fatal(err)
	}
	other := node("r1", "c2", hw.ComputeGB300Nvidia)
	dup := node("r1", "c3", hw.ComputeGB200Nvidia)
	changed := node("r1", "c1", hw.ComputeGB200Nvidia)
	changed.BMC = bmc("10.9.9.9")
	withProfile := node("r1", "c4", hw.ComputeGB200Nvidia)
	withProfile.HasInventoryProfile, withProfile.InventoryProfile = true, " prod "
	errs := r.Create([]hw.Node{other, dup, dup, changed, withProfile})
	if !strings.Contains(fmt.Sprint(errs[0]), "is a GB300 node but rack r1 is a GB200 rack") {
		t.Errorf("family: %v", errs[0])
	}
	if errs[1] != nil || !strings.Contains(fmt.Sprint(errs[2]), "duplicate target rack_id/node_id: r1/c3") {
		t.Errorf("duplicates: %v, %v", errs[1], errs[2])
	}
	if !errors.Is(errs[3], ErrConflict) {
		t.Errorf("conflict: %v", errs[3])
	}
	if errs[4] != nil {
		t.Errorf("a configured profile (trimmed) must be accepted: %v", errs[4])
	}
}

func TestUpdateReplacesEndpoints(t *testing.T) {
	r := New(nil)
	r.Create([]hw.Node{node("r1", "s1", hw.SwitchGB200Nvidia)})
	host := &hw.Endpoint{IP: "10.1.1.1", Credentials: hw.UserPass("admin", "nvos")}
	if err := r.Update("r1", "s1", nil, host); err != nil {
		t.Fatal(err)
	}
	n, _ := r.Node("r1", "s1")
	if n.Host == nil || n.Host.IP != "10.1.1.1" || n.BMC.IP != node("r1", "s1", hw.SwitchGB200Nvidia).BMC.IP {
		t.Fatalf("node after update = %+v", n)
	}
	if err := r.Update("r1", "s1", &hw.Endpoint{IP: "10.0.0.5"}, nil); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("a BMC endpoint without credentials must be refused: %v", err)
	}
	if err := r.Update("r1", "s1", nil, &hw.Endpoint{IP: "10.1.1.2"}); err != nil {
		t.Fatalf("a host endpoint may come without credentials: %v", err)
	}
	if err := r.Update("r1", "s1", nil, &hw.Endpoint{MAC: "aa:bb"}); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("a host endpoint without an address must be refused: %v", err)
	}
	if err := r.Update("r1", "nope", nil, host); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("unknown node: %v", err)
	}
	if err := r.Update("r1", "s1", nil, nil); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("empty update: %v", err)
	}
}

func TestDeleteKeepsTheEmptyRackAndItsFamily(t *testing.T) {
	r := New(nil)
	r.Create([]hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia)})
	if err := r.Delete("r1", "c1"); err != nil {
		t.Fatal(err)
	}
	if got := r.Racks(); len(got) != 1 || got[0] != "r1" {
		t.Fatalf("racks after deleting the last node: %v", got)
	}
	if err := r.Delete("r1", "c1"); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := r.Create([]hw.Node{node("r1", "p1", hw.PowerShelfGB300Liteon)})[0]; !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("a node of another family in the emptied rack: %v", err)
	}
}

// TestConcurrentCreateAndDeleteNeverLoseOrDuplicate registers and removes
// nodes of one rack from many goroutines; afterwards exactly the nodes whose
// last operation was a create are registered.
func TestConcurrentCreateAndDeleteNeverLoseOrDuplicate(t *testing.T) {
	r := New(nil)
	const workers, perWorker = 16, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				id := fmt.Sprintf("w%d-n%d", w, i)
				if err := r.Create([]hw.Node{node("rack", id, hw.ComputeGB200Nvidia)})[0]; err != nil {
					t.Errorf("create %s: %v", id, err)
				}
				if i%2 == 1 {
					if err := r.Delete("rack", id); err != nil {
						t.Errorf("delete %s: %v", id, err)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	nodes := r.Nodes()
	if len(nodes) != workers*perWorker/2 {
		t.Fatalf("%d nodes registered, want %d", len(nodes), workers*perWorker/2)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n.ID] {
			t.Fatalf("node %s listed twice", n.ID)
		}
		seen[n.ID] = true
	}
}

func TestCreateRefusesSessionTokensAndUndialableAddresses(t *testing.T) {
	r := New(nil)
	r.resolver = nil // host names are keyed as spelled: no look-up leaves the test
	token := node("r1", "token", hw.ComputeGB200Nvidia)
	token.BMC = &hw.Endpoint{IP: "10.0.0.3", Credentials: hw.SessionToken("abc")}
	tests := []struct {
		give hw.Endpoint // the BMC endpoint
		want string      // "" = accepted
	}{
		{give: hw.Endpoint{IP: "10.0.0.3"}, want: ""},
		{give: hw.Endpoint{IP: "fd00::7"}, want: ""},
		{give: hw.Endpoint{IP: "bmc-07.rack1.example.net."}, want: ""},
		{give: hw.Endpoint{HostName: "bmc07"}, want: ""},
		{give: hw.Endpoint{IP: "10.0.0.3:443"}, want: `bmc_endpoint ip_address "10.0.0.3:443" is neither an IP address nor a valid host name`},
		{give: hw.Endpoint{IP: "bmc 07"}, want: `bmc_endpoint ip_address "bmc 07" is neither`},
		{give: hw.Endpoint{IP: "-bmc"}, want: "is neither"},
		{give: hw.Endpoint{IP: "bmc_07"}, want: "is neither"},
		{give: hw.Endpoint{IP: "10.0.0.3", HostName: "a..b"}, want: `bmc_endpoint host_name "a..b" is neither`},
		{give: hw.Endpoint{IP: strings.Repeat("a", 64)}, want: "is neither"},
		{give: hw.Endpoint{IP: strings.Repeat("x", 100_000)}, want: "… (100000 characters) is neither"},
	}
	for i, tt := range tests {
		n := node("r1", fmt.Sprintf("n%d", i), hw.ComputeGB200Nvidia)
		ep := tt.give
		ep.Credentials = hw.UserPass("admin", "pw")
		n.BMC = &ep
		err := r.Create([]hw.Node{n})[0]
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.give.Host(), err)
		case tt.want != "" && (!errors.Is(err, ErrInvalidNode) || !strings.Contains(fmt.Sprint(err), tt.want)):
			t.Errorf("%.80q: %v, want %q", tt.give.Host(), err, tt.want)
		case err != nil && len(err.Error()) > 300:
			t.Errorf("refusal of a long address is %d bytes long", len(err.Error()))
		}
	}
	err := r.Create([]hw.Node{token})[0]
	if !errors.Is(err, ErrInvalidNode) || err.Error() != "bmc_endpoint has a session_token; BMCs take username/password credentials" {
		t.Fatalf("session token on a BMC: %v", err)
	}
}

func TestRefusalsReadAsCallersSeeThem(t *testing.T) {
	r := New(nil)
	r.Create([]hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia)})
	changed := node("r1", "c1", hw.ComputeGB200Nvidia)
	changed.BMC = bmc("10.9.9.9")
	tests := []struct {
		give error
		kind error
		want string
	}{
		{r.Delete("r9", "c1"), ErrRackNotFound, "rack not found: r9"},
		{r.Delete("r1", "c9"), ErrNodeNotFound, "node c9 not found in rack r1"},
		{r.Create([]hw.Node{changed})[0], ErrConflict, "node c1 already exists in rack r1 with other settings; use UpdateNode or DeleteNode first"},
		{r.Create([]hw.Node{{ID: "x", RackID: "r1", Type: hw.ComputeGB200Nvidia}})[0], ErrInvalidNode, "bmc_endpoint is required"},
	}
	for _, tt := range tests {
		if !errors.Is(tt.give, tt.kind) || fmt.Sprint(tt.give) != tt.want {
			t.Errorf("got %v, want %q (%v)", tt.give, tt.want, tt.kind)
		}
	}
}

func TestRackNodesListsOneRackByNodeID(t *testing.T) {
	r := New(nil)
	for _, err := range r.Create([]hw.Node{node("r1", "c2", hw.ComputeGB200Nvidia), node("r2", "c1", hw.ComputeGB200Nvidia),
		node("r1", "p1", hw.PowerShelfGB200Liteon), node("r1", "c1", hw.ComputeGB200Nvidia)}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := r.RackNodes("r1")
	if err != nil || len(nodes) != 3 || nodes[0].ID != "c1" || nodes[1].ID != "c2" || nodes[2].ID != "p1" {
		t.Fatalf("RackNodes(r1) = %v, %v", nodes, err)
	}
	if _, err := r.RackNodes("r9"); !errors.Is(err, ErrRackNotFound) || err.Error() != "rack not found: r9" {
		t.Fatalf("RackNodes(r9): %v", err)
	}
	if err := r.Delete("r2", "c1"); err != nil {
		t.Fatal(err)
	}
	if nodes, err := r.RackNodes("r2"); err != nil || len(nodes) != 0 {
		t.Fatalf("RackNodes of an emptied rack = %v, %v", nodes, err)
	}
}

// TestObserverSeesEveryChangeInOrder: additions, updates and deletions
// reach the observer once each, in order; refusals and identical repeats
// do not.
func TestObserverSeesEveryChangeInOrder(t *testing.T) {
	r := New(nil)
	var seen []string
	r.Observe(func(ref hw.Ref, n *hw.Node) error {
		what := "deleted"
		if n != nil {
			what = n.BMC.IP
		}
		seen = append(seen, ref.RackID+"/"+ref.NodeID+"="+what)
		return nil
	})
	r.Create([]hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia), {ID: "bad", RackID: "r1"}})
	r.Create([]hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia)})
	if err := r.Update("r1", "c1", bmc("10.0.0.2"), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete("r1", "c1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete("r1", "c1"); err == nil {
		t.Fatal("deleted twice")
	}
	want := "r1/c1=" + node("r1", "c1", hw.ComputeGB200Nvidia).BMC.IP + ",r1/c1=10.0.0.2,r1/c1=deleted"
	if got := strings.Join(seen, ","); got != want {
		t.Errorf("observer saw %s, want %s", got, want)
	}
}

// TestAChangeTheObserverRefusesIsNotMade: when the change cannot be
// persisted, the node is not added, updated or deleted, and the caller is
// told why (ErrUnavailable); the registry is as before.
func TestAChangeTheObserverRefusesIsNotMade(t *testing.T) {
	r := New(nil)
	down := false
	r.Observe(func(hw.Ref, *hw.Node) error {
		if down {
			return errors.New("store offline")
		}
		return nil
	})
	if errs := r.Create([]hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia)}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	down = true
	errs := r.Create([]hw.Node{node("r1", "c2", hw.ComputeGB200Nvidia)})
	if !errors.Is(errs[0], ErrUnavailable) || !strings.Contains(errs[0].Error(), "store offline") {
		t.Fatalf("create while the store is down: %v, want ErrUnavailable naming the cause", errs[0])
	}
	if _, err := r.Node("r1", "c2"); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("a refused node is registered: %v", err)
	}
	if err := r.Update("r1", "c1", bmc("10.0.0.9"), nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("update while the store is down: %v", err)
	}
	if n, _ := r.Node("r1", "c1"); n.BMC.IP != node("r1", "c1", hw.ComputeGB200Nvidia).BMC.IP {
		t.Fatalf("a refused update changed the node: %s", n.BMC.IP)
	}
	if err := r.Delete("r1", "c1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("delete while the store is down: %v", err)
	}
	if _, err := r.Node("r1", "c1"); err != nil {
		t.Fatalf("a refused delete removed the node: %v", err)
	}
	down = false
	if err := r.Delete("r1", "c1"); err != nil {
		t.Fatalf("delete once the store is back: %v", err)
	}
}

// TestADeviceIsRegisteredUnderOneNodeOnly: a node whose BMC (however
// spelled) or switch host is already registered under another id is
// refused naming that node, by Create and by Update; the same node may be
// re-added or updated with its own endpoints, and a deleted node's
// endpoints are free again.
func TestADeviceIsRegisteredUnderOneNodeOnly(t *testing.T) {
	r := New(nil)
	r.resolver = fakeResolver{"bmc-05.rack-001.example": {netip.MustParseAddr("10.0.1.5")}}
	first := node("rack-001", "compute-05", hw.ComputeGB200Nvidia)
	first.BMC = bmc("10.0.1.5")
	sw := node("rack-001", "switch-01", hw.SwitchGB200Nvidia)
	sw.Host = &hw.Endpoint{IP: "10.0.2.1", Port: 22}
	if errs := r.Create([]hw.Node{first, sw}); errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	alias := node("rack-900", "compute-05", hw.ComputeGB200Nvidia)
	alias.BMC = &hw.Endpoint{HostName: "BMC-05.rack-001.example", Credentials: hw.UserPass("admin", "pw")}
	hostAlias := node("rack-001", "switch-99", hw.SwitchGB200Nvidia)
	hostAlias.Host = &hw.Endpoint{IP: "10.0.2.1"}
	again := first // re-adding the same node is still fine
	errs := r.Create([]hw.Node{alias, hostAlias, again})
	want := "bmc endpoint 10.0.1.5:443 is already registered as node compute-05 of rack rack-001"
	if !errors.Is(errs[0], ErrConflict) || errs[0].Error() != want {
		t.Fatalf("alias BMC: %v, want %q", errs[0], want)
	}
	if !errors.Is(errs[1], ErrConflict) || errs[1].Error() != "host endpoint 10.0.2.1 is already registered as node switch-01 of rack rack-001" {
		t.Fatalf("alias switch host: %v", errs[1])
	}
	if errs[2] != nil {
		t.Fatalf("re-adding the node: %v", errs[2])
	}
	if _, err := r.Node("rack-900", "compute-05"); !errors.Is(err, ErrRackNotFound) {
		t.Fatalf("the alias was registered: %v", err)
	}
	if err := r.Update("rack-001", "switch-01", bmc("10.0.1.5"), nil); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "compute-05") {
		t.Fatalf("update onto another node's BMC: %v", err)
	}
	if err := r.Update("rack-001", "compute-05", bmc("10.0.1.5"), nil); err != nil {
		t.Fatalf("update with its own BMC: %v", err)
	}
	if err := r.Update("rack-001", "compute-05", bmc("10.0.1.50"), nil); err != nil {
		t.Fatal(err)
	}
	if errs := r.Create([]hw.Node{alias}); errs[0] != nil {
		t.Fatalf("an endpoint the update gave up is still taken: %v", errs[0])
	}
	if err := r.Delete("rack-900", "compute-05"); err != nil {
		t.Fatal(err)
	}
	if err := r.Update("rack-001", "switch-01", bmc("10.0.1.5"), nil); err != nil {
		t.Fatalf("a deleted node's endpoint is still taken: %v", err)
	}
}

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

// TestRacksOf places node ids in the racks that register them.
func TestRacksOf(t *testing.T) {
	r := New(nil)
	c := hw.ComputeGB200Nvidia
	for _, err := range r.Create([]hw.Node{node("r2", "n1", c), node("r1", "n1", c), node("r1", "n2", c)}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := r.RacksOf([]string{"n1", "n2", "n3", "n1"})
	if len(got) != 2 || strings.Join(got["n1"], ",") != "r1,r2" || strings.Join(got["n2"], ",") != "r1" {
		t.Fatalf("RacksOf = %v", got)
	}
	if _, ok := got["n3"]; ok {
		t.Fatal("an unregistered node id was placed")
	}
}
