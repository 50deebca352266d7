package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/store"
)

// defaultsOf are the ids of the listed objects marked default.
func defaultsOf(objs []store.FirmwareObject) []string {
	var out []string
	for _, o := range objs {
		if o.IsDefault {
			out = append(out, o.ID)
		}
	}
	return out
}

// wantDefault checks that hardwareType's default is id, and that it is the
// only object of that type marked so.
func wantDefault(t *testing.T, s store.Catalog, hardwareType, id string) {
	t.Helper()
	got, err := s.DefaultFirmwareObject(t.Context(), hardwareType)
	if err != nil || got.ID != id || !got.IsDefault {
		t.Errorf("default of %q = %s (is_default %v), %v; want %s", hardwareType, got.ID, got.IsDefault, err, id)
	}
	var ofType []store.FirmwareObject // filtered here: an empty filter would keep every type
	for _, o := range list(t, s, store.ObjectFilter{HardwareType: hardwareType}) {
		if o.HardwareType == hardwareType {
			ofType = append(ofType, o)
		}
	}
	if marked := defaultsOf(ofType); !reflect.DeepEqual(marked, []string{id}) {
		t.Errorf("objects of %q marked default: %v, want [%s]", hardwareType, marked, id)
	}
}

func testOneDefaultPerHardwareType(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	for _, o := range []struct{ id, hw string }{{"A_1", "GB200"}, {"B_1", "GB200"}, {"C_1", "GB300"}, {"N_1", ""}} {
		create(t, s, object(o.id, o.hw))
	}
	got, err := s.SetDefaultFirmwareObject(ctx, "A_1")
	if err != nil || !got.IsDefault || got.ID != "A_1" {
		t.Fatalf("set default A_1 = %+v, %v", got, err)
	}
	wantDefault(t, s, "GB200", "A_1")
	if _, err := s.SetDefaultFirmwareObject(ctx, "C_1"); err != nil {
		t.Fatal(err)
	}
	wantDefault(t, s, "GB300", "C_1")
	wantDefault(t, s, "GB200", "A_1")

	if _, err := s.SetDefaultFirmwareObject(ctx, "B_1"); err != nil {
		t.Fatal(err)
	}
	wantDefault(t, s, "GB200", "B_1")
	if get(t, s, "A_1").IsDefault {
		t.Error("A_1 is still marked default after B_1 became the default of GB200")
	}
	wantDefault(t, s, "GB300", "C_1")

	if _, err := s.SetDefaultFirmwareObject(ctx, "B_1"); err != nil {
		t.Fatalf("setting the default again: %v", err)
	}
	wantDefault(t, s, "GB200", "B_1")
	_, err = s.SetDefaultFirmwareObject(ctx, "MISSING_1")
	wantErr(t, "set default of a missing object", err, store.ErrNotFound)
	wantDefault(t, s, "GB200", "B_1")

	// The empty hardware type is a class of its own.
	if _, err := s.SetDefaultFirmwareObject(ctx, "N_1"); err != nil {
		t.Fatal(err)
	}
	wantDefault(t, s, "", "N_1")
	wantDefault(t, s, "GB200", "B_1")
}

// testConcurrentSetDefaultKeepsOneDefault races SetDefaultFirmwareObject
// calls for one hardware type against each other and against readers: no
// read may ever see two defaults, and in the end exactly one remains.
func testConcurrentSetDefaultKeepsOneDefault(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	const writers, rounds = 6, 12
	for i := range writers {
		create(t, s, object(fmt.Sprintf("RACE_%d", i), "GB200"))
	}
	create(t, s, object("OTHER_1", "GB300"))
	if _, err := s.SetDefaultFirmwareObject(ctx, "OTHER_1"); err != nil {
		t.Fatal(err)
	}

	var writing, reading sync.WaitGroup
	done := make(chan struct{})
	for i := range writers {
		writing.Go(func() {
			id := fmt.Sprintf("RACE_%d", i)
			for range rounds {
				got, err := s.SetDefaultFirmwareObject(ctx, id)
				if err != nil || got.ID != id {
					t.Errorf("set default %s = %s, %v", id, got.ID, err)
					return
				}
			}
		})
	}
	for range 2 {
		reading.Go(func() {
			for {
				objs, err := s.ListFirmwareObjects(ctx, store.ObjectFilter{HardwareType: "GB200"})
				if err != nil {
					t.Errorf("list: %v", err)
					return
				}
				if marked := defaultsOf(objs); len(marked) > 1 {
					t.Errorf("a read saw %d defaults of GB200: %v", len(marked), marked)
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	writing.Wait()
	close(done)
	reading.Wait()

	final, err := s.DefaultFirmwareObject(ctx, "GB200")
	if err != nil {
		t.Fatalf("no default of GB200 after the race: %v", err)
	}
	wantDefault(t, s, "GB200", final.ID)
	wantDefault(t, s, "GB300", "OTHER_1")
}

func testDeleteKeepsHistory(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	create(t, s, object("DEL_1", "GB200"))
	if err := s.SetArtifactStatus(ctx, "DEL_1", "cpld.fwpkg", store.ArtifactStatus{State: store.ArtifactReady, LocalPath: "/fw/cpld.fwpkg"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetDefaultFirmwareObject(ctx, "DEL_1"); err != nil {
		t.Fatal(err)
	}
	record, err := s.RecordApply(ctx, store.ApplyRecord{ObjectID: "DEL_1", RackID: "rack-1", NodeIDs: []string{"c1"}, JobID: "job-1"})
	if err != nil {
		t.Fatal(err)
	}
	before := get(t, s, "DEL_1")

	deleted, err := s.DeleteFirmwareObject(ctx, "DEL_1")
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if !reflect.DeepEqual(deleted, before) {
		t.Errorf("delete returned\n%+v\nwant the object as it was\n%+v", deleted, before)
	}
	_, err = s.GetFirmwareObject(ctx, "DEL_1")
	wantErr(t, "get after delete", err, store.ErrNotFound)
	_, err = s.DefaultFirmwareObject(ctx, "GB200")
	wantErr(t, "default after its object was deleted", err, store.ErrNotFound)
	_, err = s.DeleteFirmwareObject(ctx, "DEL_1")
	wantErr(t, "delete twice", err, store.ErrNotFound)
	if got := list(t, s, store.ObjectFilter{}); len(got) != 0 {
		t.Errorf("list after delete: %v", ids(got))
	}
	history, err := s.ListApplyHistory(ctx, store.HistoryFilter{ObjectID: "DEL_1"})
	if err != nil || len(history) != 1 || !reflect.DeepEqual(history[0], record) {
		t.Fatalf("history after delete = %+v, %v; want [%+v]", history, err, record)
	}

	// The id is free again, and the new object starts afresh.
	again := create(t, s, object("DEL_1", "GB300"))
	if again.IsDefault || again.HardwareType != "GB300" || again.Artifacts[1].State != store.ArtifactPending {
		t.Errorf("re-created object carries the old one's state: %+v", again)
	}
	_, err = s.DefaultFirmwareObject(ctx, "GB200")
	wantErr(t, "default of GB200 after re-creating the id as GB300", err, store.ErrNotFound)
	if history, _ := s.ListApplyHistory(ctx, store.HistoryFilter{}); len(history) != 1 {
		t.Errorf("history has %d records, want the one", len(history))
	}
}
