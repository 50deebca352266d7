package sqlstore_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// A cluster parent written by one member reads back, racks in order, from
// another member's store; an id is recorded once; a record without its
// racks, or a rack with both or neither of a job and a failure, is refused.
func TestClusterParentsAreReadByEveryMember(t *testing.T) {
	a, b := sharedPostgres(t)
	checkClusterParents(t, a, b)
	checkListClusterParents(t, a, b)
}

// SQLite has the tables too (one schema history for both engines).
func TestClusterParentsOnSQLite(t *testing.T) {
	s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	checkClusterParents(t, s, s)
	checkListClusterParents(t, s, s)
}

func checkClusterParents(t *testing.T, writer, reader *sqlstore.Store) {
	t.Helper()
	p := store.ClusterParent{ID: "5b0e0f0a-1111-4a4a-8b8b-000000000001", Type: "firmware_update",
		Method: "/rack_manager.RackManager/BatchUpdateFirmware", Member: "rmsd-0",
		Racks: []store.ClusterParentRack{{RackID: "rack-2", JobID: "job-2"}, {RackID: "rack-1", Failure: "rack rack-1: owner not reachable; retry"}, {RackID: "rack-3", JobID: "job-3"}}}
	got, err := writer.CreateClusterParent(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt.IsZero() {
		t.Error("no creation time")
	}
	read, err := reader.ClusterParent(t.Context(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !read.CreatedAt.Equal(got.CreatedAt) {
		t.Errorf("created %v, read %v", got.CreatedAt, read.CreatedAt)
	}
	read.CreatedAt = got.CreatedAt
	if !reflect.DeepEqual(read, got) {
		t.Errorf("read %+v, want %+v", read, got)
	}
	if _, err := writer.CreateClusterParent(t.Context(), p); !errors.Is(err, store.ErrExists) {
		t.Errorf("second create: %v", err)
	}
	if _, err := reader.ClusterParent(t.Context(), "no-such-parent"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown parent: %v", err)
	}
	for _, bad := range []store.ClusterParent{
		{ID: "x", Type: "firmware_update", Method: "m", Member: "rmsd-0"},
		{ID: "x", Type: "firmware_update", Method: "m", Member: "rmsd-0", Racks: []store.ClusterParentRack{{RackID: "r", JobID: "j", Failure: "f"}}},
		{ID: "x", Type: "firmware_update", Method: "m", Member: "rmsd-0", Racks: []store.ClusterParentRack{{RackID: "r"}}},
	} {
		if _, err := writer.CreateClusterParent(t.Context(), bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := reader.ClusterParent(t.Context(), "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused parent was written: %v", err)
	}
}

// The newest parents list first, each with its racks in request order;
// a limit keeps the newest.
func checkListClusterParents(t *testing.T, writer, reader *sqlstore.Store) {
	t.Helper()
	before, err := reader.ListClusterParents(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var written []store.ClusterParent
	for i, id := range []string{"list-parent-2", "list-parent-3", "list-parent-4"} {
		p, err := writer.CreateClusterParent(t.Context(), store.ClusterParent{ID: id, Type: "switch_mtls_disable",
			Method: "/rack_manager.RackManager/BatchDisableSwitchMtls", Member: "rmsd-1",
			Racks: []store.ClusterParentRack{{RackID: "rack-b", JobID: id + "-b"}, {RackID: "rack-a", Failure: "no switch"}, {RackID: "rack-c", JobID: id + "-c"}}[:i+1]})
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, p)
	}
	got, err := reader.ListClusterParents(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("listed %d parents, want 2: %+v", len(got), got)
	}
	for i, want := range []store.ClusterParent{written[2], written[1]} {
		if !got[i].CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("parent %d created %v, want %v", i, got[i].CreatedAt, want.CreatedAt)
		}
		got[i].CreatedAt = want.CreatedAt
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("parent %d: %+v, want %+v", i, got[i], want)
		}
	}
	all, err := reader.ListClusterParents(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(before)+3 || all[2].ID != "list-parent-2" {
		t.Errorf("listed %d parents (%d before), the third %q", len(all), len(before), all[2].ID)
	}
}
