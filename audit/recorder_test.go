package audit_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/audit"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/syncbuf"
)

func openSQLite(t *testing.T) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func record(method string, node string) store.AuditRecord {
	return store.AuditRecord{Caller: "CN=ops", CallerVerified: true, CallerSubject: "CN=ops", CallerCN: "ops",
		CallerAddr: "127.0.0.1:4000", Method: method, RackIDs: []string{"rack-1"}, NodeIDs: []string{node},
		JobIDs: []string{"job-" + node}, Outcome: "OK"}
}

func TestRecordsGoToTheStreamAndTheStore(t *testing.T) {
	st := openSQLite(t)
	var stream, logs syncbuf.Buffer
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	r := audit.New(audit.Options{Stream: zerolog.New(&stream), Log: zerolog.New(&logs), Store: st,
		Now: func() time.Time { return at }})
	r.Record(record("/rack_manager.RackManager/SetPowerState", "node-1"))
	r.Record(record("/rack_manager.RackManager/DeleteNode", "node-2"))
	r.Close(t.Context())

	lines := strings.Split(strings.TrimSpace(stream.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("stream has %d lines, want 2:\n%s", len(lines), stream.String())
	}
	var line struct {
		Stream, Caller, RPC, Outcome, Message string
		NodeIDs                               []string `json:"node_ids"`
		JobIDs                                []string `json:"job_ids"`
		CallerCN                              string   `json:"caller_cn"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &line); err != nil {
		t.Fatal(err)
	}
	if line.Stream != "audit" || line.RPC != "/rack_manager.RackManager/DeleteNode" || line.Caller != "CN=ops" ||
		line.CallerCN != "ops" || line.Outcome != "OK" || len(line.NodeIDs) != 1 || line.NodeIDs[0] != "node-2" ||
		len(line.JobIDs) != 1 || line.JobIDs[0] != "job-node-2" {
		t.Errorf("stream line %s", lines[1])
	}
	got, err := st.ListAudit(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Method != "/rack_manager.RackManager/DeleteNode" || !got[0].Time.Equal(at) || got[1].NodeIDs[0] != "node-1" {
		t.Errorf("store holds %+v", got)
	}
	if r.Dropped() != 0 || r.Stored() != 2 || logs.String() != "" {
		t.Errorf("dropped %d, stored %d, logs %q; want 0, 2, nothing", r.Dropped(), r.Stored(), logs.String())
	}
}

func TestRetentionPrunesOldRecords(t *testing.T) {
	st := openSQLite(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	old, recent := record("/m", "old"), record("/m", "recent")
	old.Time, recent.Time = now.Add(-91*24*time.Hour), now.Add(-89*24*time.Hour)
	if _, err := st.AppendAudit(t.Context(), []store.AuditRecord{old, recent}); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	r := audit.New(audit.Options{Stream: zerolog.Nop(), Log: zerolog.New(&logs), Store: st,
		Retention: 90 * 24 * time.Hour, Now: func() time.Time { return now }})
	defer r.Close(t.Context())
	waitFor(t, "prune of the record past its retention", func() bool {
		got, err := st.ListAudit(t.Context(), store.AuditFilter{})
		return err == nil && len(got) == 1 && got[0].NodeIDs[0] == "recent"
	})
	waitFor(t, "log of the prune", func() bool { return strings.Contains(logs.String(), "audit records past their retention pruned") })
}

// TestAStalledStoreNeitherDelaysNorLosesTheStream stalls PostgreSQL
// (a proxy that stops forwarding): Record returns at once, every record is
// in the stream, the store queue overflows into the dropped counter with a
// warning, and once the store answers again the records it took are there.
func TestAStalledStoreNeitherDelaysNorLosesTheStream(t *testing.T) {
	proxy, via := storetest.ProxyPostgres(t, storetest.TempPostgresDatabase(t))
	// A write deadline far past the test's patience: were Record to wait
	// for the store, it could not return while the store is stalled.
	st, err := sqlstore.OpenPostgres(t.Context(), via, 4, sqlstore.Options{WriteTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })

	var stream, logs syncbuf.Buffer
	r := audit.New(audit.Options{Stream: zerolog.New(&stream), Log: zerolog.New(&logs), Store: st, QueueSize: 4})
	proxy.Stall()
	const n = 20
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			r.Record(record("/rack_manager.RackManager/SetPowerState", "node-"+string(rune('a'+i))))
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Record waited for the stalled store")
	}
	if got := strings.Count(stream.String(), `"stream":"audit"`); got != n {
		t.Errorf("stream has %d records, want %d", got, n)
	}
	waitFor(t, "dropped records", func() bool { return r.Dropped() > 0 })
	if !strings.Contains(logs.String(), "audit record not stored: the store queue is full") {
		t.Errorf("no warning of the drop in %q", logs.String())
	}
	proxy.Restore()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r.Close(ctx)
	if r.Stored()+r.Dropped() != n {
		t.Errorf("stored %d + dropped %d, want %d", r.Stored(), r.Dropped(), n)
	}
	got, err := st.ListAudit(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(got)) != r.Stored() {
		t.Errorf("store holds %d records, the recorder says it stored %d", len(got), r.Stored())
	}
}
