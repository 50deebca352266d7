package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
)

// auditLog is s's audit table, or the test fails.
func auditLog(t *testing.T, s store.Store) store.AuditLog {
	t.Helper()
	a, ok := s.(store.AuditLog)
	if !ok {
		t.Fatalf("%T has no audit log", s)
	}
	return a
}

func testAuditAppendListFilterPage(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	a := auditLog(t, s)
	ctx := t.Context()
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	give := []store.AuditRecord{
		{Time: at, Caller: "CN=ops,OU=sre dns:ops.example", CallerVerified: true, CallerSubject: "CN=ops,OU=sre",
			CallerCN: "ops", CallerOU: []string{"sre"}, CallerDNS: []string{"ops.example"}, CallerURIs: []string{"spiffe://x/ops"},
			CallerAddr: "10.0.0.1:5000", Method: "/rack_manager.RackManager/SetPowerState",
			RackIDs: []string{"rack-1"}, NodeIDs: []string{"node-1"}, Outcome: "OK"},
		{Time: at.Add(time.Minute), Caller: "peer 10.0.0.2:1", CallerAddr: "10.0.0.2:1", Method: "/rack_manager.RackManager/UpdateFirmware",
			RackIDs: []string{"rack-1", "rack-1"}, NodeIDs: []string{"node-1", "node-2"}, JobIDs: []string{"job-1"}, Outcome: "FAILURE", Reason: "node-2 is held"},
		{Time: at.Add(2 * time.Minute), Caller: "unknown", Method: "/rmsd_admin.Admin/KillActors", Outcome: "PERMISSION_DENIED", Reason: "not loopback"},
		{Time: at.Add(3 * time.Minute), Caller: "unknown", Method: "/rack_manager.RackManager/SetPowerState",
			RackIDs: []string{"rack-2"}, NodeIDs: []string{"node-1"}, Outcome: "OK"},
	}
	written, err := a.AppendAudit(ctx, give[:2])
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	more, err := a.AppendAudit(ctx, give[2:])
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	written = append(written, more...)
	for i, r := range written {
		want := give[i]
		want.Seq, want.Time = r.Seq, want.Time.Truncate(time.Microsecond)
		if !reflect.DeepEqual(r, want) {
			t.Errorf("appended %d = %+v, want %+v", i, r, want)
		}
		if i > 0 && r.Seq <= written[i-1].Seq {
			t.Errorf("seq %d after %d", r.Seq, written[i-1].Seq)
		}
	}
	tests := []struct {
		name string
		give store.AuditFilter
		want []int
	}{
		{"all", store.AuditFilter{}, []int{3, 2, 1, 0}},
		{"rack", store.AuditFilter{RackID: "rack-1"}, []int{1, 0}},
		{"node", store.AuditFilter{NodeID: "node-1"}, []int{3, 1, 0}},
		{"rack and node", store.AuditFilter{RackID: "rack-1", NodeID: "node-2"}, []int{1}},
		{"since", store.AuditFilter{Since: at.Add(time.Minute)}, []int{3, 2, 1}},
		{"limit", store.AuditFilter{Limit: 2}, []int{3, 2}},
		{"next page", store.AuditFilter{Limit: 2, BeforeSeq: written[2].Seq}, []int{1, 0}},
		{"nothing", store.AuditFilter{RackID: "rack-9"}, nil},
	}
	for _, tt := range tests {
		got, err := a.ListAudit(ctx, tt.give)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var want []store.AuditRecord
		for _, i := range tt.want {
			want = append(want, written[i])
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got\n%+v\nwant\n%+v", tt.name, got, want)
		}
	}
	if _, err := a.AppendAudit(ctx, []store.AuditRecord{{Time: at, Outcome: "OK"}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("append without a method: %v, want ErrInvalid", err)
	}
}

func testAuditPruneKeepsTheRetentionWindow(t *testing.T, b Backend) {
	location := b.Fresh(t)
	s := open(t, b, location, newClock().Now)
	a := auditLog(t, s)
	ctx := t.Context()
	cut := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	var give []store.AuditRecord
	for i, d := range []time.Duration{-48 * time.Hour, -time.Microsecond, 0, time.Hour} {
		give = append(give, store.AuditRecord{Time: cut.Add(d), Method: "/m", Outcome: "OK",
			RackIDs: []string{"rack-1"}, NodeIDs: []string{string(rune('a' + i))}})
	}
	written, err := a.AppendAudit(ctx, give)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	n, err := a.PruneAudit(ctx, cut)
	if err != nil || n != 2 {
		t.Fatalf("prune = %d, %v; want the 2 records older than the cut", n, err)
	}
	// A second store on the same storage (another process) sees the cut.
	got, err := auditLog(t, open(t, b, location, newClock().Now)).ListAudit(ctx, store.AuditFilter{RackID: "rack-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []store.AuditRecord{written[3], written[2]}) {
		t.Errorf("after the prune: %+v, want the records at and after the cut", got)
	}
	if got, err := a.ListAudit(ctx, store.AuditFilter{NodeID: "a"}); err != nil || len(got) != 0 {
		t.Errorf("a pruned record's node still selects %v (%v)", got, err)
	}
	if n, err := a.PruneAudit(ctx, cut); err != nil || n != 0 {
		t.Errorf("second prune = %d, %v; want 0", n, err)
	}
}

// A record of a batch of a thousand nodes (a site-wide firmware update) is
// found by each of its nodes, the last one included, and listed whole; a
// node it names twice is kept once in the index and as given in the record.
func testAuditLargeBatchIsIndexedByEveryNode(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	a := auditLog(t, s)
	ctx := t.Context()
	nodes := make([]string, 1000)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("rack-%02d-compute-%02d", i/18, i%18)
	}
	racks := []string{"rack-00", "rack-55"}
	rec := store.AuditRecord{Time: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC), Caller: "unknown",
		Method: "/rack_manager.RackManager/BatchUpdateFirmware", RackIDs: racks,
		NodeIDs: append(append([]string(nil), nodes...), nodes[0]), Outcome: "OK"}
	written, err := a.AppendAudit(ctx, []store.AuditRecord{rec})
	if err != nil {
		t.Fatalf("append a record of %d nodes: %v", len(nodes), err)
	}
	for _, node := range []string{nodes[0], nodes[199], nodes[200], nodes[999]} {
		got, err := a.ListAudit(ctx, store.AuditFilter{NodeID: node})
		if err != nil {
			t.Fatalf("list by node %s: %v", node, err)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], written[0]) {
			t.Errorf("list by node %s: %d records, want the batch's", node, len(got))
		}
	}
	if got, err := a.ListAudit(ctx, store.AuditFilter{RackID: "rack-55", NodeID: nodes[999]}); err != nil || len(got) != 1 {
		t.Errorf("list by rack-55 and the last node: %d records, %v; want the batch's", len(got), err)
	}
	if got, _ := a.ListAudit(ctx, store.AuditFilter{NodeID: "rack-56-compute-00"}); len(got) != 0 {
		t.Errorf("a node the batch does not name lists %d records", len(got))
	}
}
