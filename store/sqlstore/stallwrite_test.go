package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// stallWait is how long a test waits for a write to a stalled store to
// return: far above the store's timeout, so only a write that does not
// stop at its deadline reaches it.
const stallWait = 20 * time.Second

// stalledStore opens a PostgreSQL store through a proxy the test can
// stall, its reads and writes bounded by timeout.
func stalledStore(t *testing.T, timeout time.Duration) (*sqlstore.Store, *storetest.CutProxy) {
	t.Helper()
	proxy, via := storetest.ProxyPostgres(t, storetest.TempPostgresDatabase(t))
	st, err := sqlstore.OpenPostgres(t.Context(), via, 4, sqlstore.Options{ReadTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, proxy
}

// returnsWithin runs write with the caller context ctx and fails the test
// when it has not returned within stallWait; else it returns its error.
func returnsWithin(t *testing.T, what string, write func(context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*stallWait) // the caller's own, far longer
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- write(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(stallWait):
		t.Fatalf("%s to a stalled store did not return within %s", what, stallWait)
		return nil
	}
}

func stalledObject(id string) store.FirmwareObject {
	return store.FirmwareObject{ID: id, HardwareType: "GB200", ConfigJSON: `{"ProductName":"P","Milestones":[]}`,
		Artifacts: []store.Artifact{{Name: "bmc.fwpkg", Location: "https://artifacts.example/bmc.fwpkg"}}}
}

// TestPostgresStalledWritesFailUnavailable stalls the connection to
// PostgreSQL (no reset): every write outside the job journal (catalog,
// apply history, nodes, racks, Update) fails with store.ErrUnavailable at
// the store's own deadline, although the caller's is far longer; nothing
// of them is stored, and writes succeed again once the proxy forwards.
func TestPostgresStalledWritesFailUnavailable(t *testing.T) {
	st, proxy := stalledStore(t, time.Second)
	ctx := t.Context()
	if _, err := st.CreateFirmwareObject(ctx, stalledObject("KEPT_1")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutNode(ctx, store.NodeRecord{RackID: "r1", NodeID: "kept", KeyID: "k1", Sealed: []byte("x")}); err != nil {
		t.Fatal(err)
	}

	writes := []struct {
		what  string
		write func(context.Context) error
	}{
		{"CreateFirmwareObject", func(ctx context.Context) error {
			_, err := st.CreateFirmwareObject(ctx, stalledObject("NEW_1"))
			return err
		}},
		{"SetDefaultFirmwareObject", func(ctx context.Context) error {
			_, err := st.SetDefaultFirmwareObject(ctx, "KEPT_1")
			return err
		}},
		{"SetObjectAvailability", func(ctx context.Context) error {
			return st.SetObjectAvailability(ctx, "KEPT_1", false, "download failed")
		}},
		{"SetArtifactStatus", func(ctx context.Context) error {
			return st.SetArtifactStatus(ctx, "KEPT_1", "bmc.fwpkg", store.ArtifactStatus{State: store.ArtifactReady, LocalPath: "/x"})
		}},
		{"RecordApply", func(ctx context.Context) error {
			_, err := st.RecordApply(ctx, store.ApplyRecord{ObjectID: "KEPT_1", RackID: "r1", JobID: "j1"})
			return err
		}},
		{"PutNode", func(ctx context.Context) error {
			_, err := st.PutNode(ctx, store.NodeRecord{RackID: "r1", NodeID: "new", KeyID: "k1", Sealed: []byte("y")})
			return err
		}},
		{"DeleteNode", func(ctx context.Context) error { return st.DeleteNode(ctx, "r1", "kept") }},
		{"PutRack", func(ctx context.Context) error {
			return st.PutRack(ctx, store.RackRecord{RackID: "r9", Family: "GB200"})
		}},
		{"Update", func(ctx context.Context) error {
			return st.Update(ctx, func(tx store.Tx) error {
				_, err := tx.CreateFirmwareObject(ctx, stalledObject("NEW_2"))
				return err
			})
		}},
		// Last: once the store answers again, it removes the object the others change.
		{"DeleteFirmwareObject", func(ctx context.Context) error {
			_, err := st.DeleteFirmwareObject(ctx, "KEPT_1")
			return err
		}},
	}

	proxy.Stall()
	for _, w := range writes {
		if err := returnsWithin(t, w.what, w.write); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s while stalled: %v, want store.ErrUnavailable", w.what, err)
		}
	}
	proxy.Restore()

	obj, err := st.GetFirmwareObject(ctx, "KEPT_1")
	if err != nil {
		t.Fatalf("the object the stalled writes named: %v", err)
	}
	if obj.IsDefault || obj.UnavailableReason != "" || obj.Artifacts[0].State != store.ArtifactPending {
		t.Errorf("a stalled write changed the object: %+v", obj)
	}
	for _, id := range []string{"NEW_1", "NEW_2"} {
		if _, err := st.GetFirmwareObject(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("object %s written while stalled: %v, want not found", id, err)
		}
	}
	if h, err := st.ListApplyHistory(ctx, store.HistoryFilter{}); err != nil || len(h) != 0 {
		t.Errorf("apply history after a stalled record: %v, %v; want empty", h, err)
	}
	nodes, err := st.ListNodes(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].NodeID != "kept" {
		t.Errorf("nodes after stalled writes: %v, %v; want only the one stored before", nodes, err)
	}
	for _, w := range writes {
		if err := returnsWithin(t, w.what, w.write); err != nil {
			t.Errorf("%s after the stall: %v", w.what, err)
		}
	}
}

// TestPostgresAWriteStalledAfterItBeganFailsUnavailable: a transaction
// whose statements the caller runs with its own, longer context still
// ends at the store's deadline when the database stalls after it began,
// and nothing of it is stored.
func TestPostgresAWriteStalledAfterItBeganFailsUnavailable(t *testing.T) {
	st, proxy := stalledStore(t, time.Second)
	err := returnsWithin(t, "a transaction stalled after its begin", func(ctx context.Context) error {
		return st.Update(ctx, func(tx store.Tx) error {
			if _, err := tx.CreateFirmwareObject(ctx, stalledObject("FIRST_1")); err != nil {
				return err
			}
			proxy.Stall()
			_, err := tx.CreateFirmwareObject(ctx, stalledObject("SECOND_1"))
			return err
		})
	})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("transaction stalled after its begin: %v, want store.ErrUnavailable", err)
	}
	proxy.Restore()
	objs, err := returnsWithinList(t, st)
	if err != nil || len(objs) != 0 {
		t.Errorf("objects after a stalled transaction: %d, %v; want none", len(objs), err)
	}
}

func returnsWithinList(t *testing.T, st *sqlstore.Store) ([]store.FirmwareObject, error) {
	t.Helper()
	var objs []store.FirmwareObject
	err := returnsWithin(t, "a list after the stall", func(ctx context.Context) error {
		var err error
		objs, err = st.ListFirmwareObjects(ctx, store.ObjectFilter{})
		return err
	})
	return objs, err
}
