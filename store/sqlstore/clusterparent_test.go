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
}

// SQLite has the tables too (one schema history for both engines).
func TestClusterParentsOnSQLite(t *testing.T) {
	s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	checkClusterParents(t, s, s)
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
