package storetest

import (
	"bytes"
	"testing"

	"github.com/rmsd/rmsd/store"
)

// testNodes stores, replaces, lists and deletes node records; bad records
// and unknown nodes are refused.
func testNodes(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	if got, err := s.ListNodes(ctx); err != nil || len(got) != 0 {
		t.Fatalf("new store lists nodes %v, %v", got, err)
	}
	for _, bad := range []store.NodeRecord{
		{NodeID: "n", KeyID: "k", Sealed: []byte{1}},
		{RackID: "r", NodeID: "n", Sealed: []byte{1}},
		{RackID: "r", NodeID: "n", KeyID: "k"},
	} {
		_, err := s.PutNode(ctx, bad)
		wantErr(t, "put a node record without identity, key or payload", err, store.ErrInvalid)
	}
	put := func(n store.NodeRecord) store.NodeRecord {
		t.Helper()
		got, err := s.PutNode(ctx, n)
		if err != nil || got.UpdatedAt.IsZero() {
			t.Fatalf("put %s/%s: %+v, %v", n.RackID, n.NodeID, got, err)
		}
		return got
	}
	put(store.NodeRecord{RackID: "r2", NodeID: "a", KeyID: "k1", Sealed: []byte("x")})
	put(store.NodeRecord{RackID: "r1", NodeID: "b", KeyID: "k1", Sealed: []byte("old")})
	put(store.NodeRecord{RackID: "r1", NodeID: "b", KeyID: "k2", Sealed: []byte{0, 1, 2}})
	got, err := s.ListNodes(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("list = %+v, %v; want 2 records", got, err)
	}
	if got[0].RackID != "r1" || got[0].NodeID != "b" || got[0].KeyID != "k2" || !bytes.Equal(got[0].Sealed, []byte{0, 1, 2}) || got[1].RackID != "r2" {
		t.Errorf("list = %+v; want r1/b replaced (k2), then r2/a", got)
	}
	if err := s.DeleteNode(ctx, "r1", "b"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantErr(t, "delete a node twice", s.DeleteNode(ctx, "r1", "b"), store.ErrNotFound)
	if got, _ := s.ListNodes(ctx); len(got) != 1 || got[0].NodeID != "a" {
		t.Errorf("after delete: %+v", got)
	}
}

// testRacks records racks once with their family and lists them; a bad
// record is refused.
func testRacks(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	if got, err := s.ListRacks(ctx); err != nil || len(got) != 0 {
		t.Fatalf("new store lists racks %v, %v", got, err)
	}
	wantErr(t, "put a rack without family", s.PutRack(ctx, store.RackRecord{RackID: "r"}), store.ErrInvalid)
	for _, r := range []store.RackRecord{{RackID: "r2", Family: "GB300"}, {RackID: "r1", Family: "GB200"}, {RackID: "r1", Family: "GB300"}} {
		if err := s.PutRack(ctx, r); err != nil {
			t.Fatalf("put rack %+v: %v", r, err)
		}
	}
	got, err := s.ListRacks(ctx)
	want := []store.RackRecord{{RackID: "r1", Family: "GB200"}, {RackID: "r2", Family: "GB300"}}
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("racks = %+v, %v; want %+v (a rack keeps its first family)", got, err, want)
	}
}
