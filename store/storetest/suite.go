package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
)

// Backend is what the suite needs of an engine.
type Backend struct {
	// Fresh returns the location of new, empty storage (a file path, a
	// database URL) that lives until t ends.
	Fresh func(t *testing.T) string
	// Open opens a store on location, stamping times with now. Opening the
	// same location again, also while another store has it open, must see
	// the same data (as a second process would).
	Open func(ctx context.Context, location string, now func() time.Time) (store.Store, error)
	// OpenOwned opens a store on location as the own of the process host
	// and pid name (see owner_contract.go). Required.
	OpenOwned func(ctx context.Context, location, host string, pid int) (store.Store, error)
	// TakeOver records another owner under a newer epoch on location,
	// past the lock, as a process that found the lock free after this one
	// lost it would. Required.
	TakeOver func(t *testing.T, location string)
}

// Run runs the contract suite against b, one subtest per behaviour, each on
// fresh storage.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"CreateAndGetRoundTrip", testCreateAndGetRoundTrip},
		{"CreateRefusesATakenID", testCreateRefusesATakenID},
		{"CreateRefusesInvalidObjects", testCreateRefusesInvalidObjects},
		{"MissingObjectsAreNotFound", testMissingObjectsAreNotFound},
		{"ListFiltersAreANDedNewestFirst", testListFiltersAreANDedNewestFirst},
		{"SameInstantKeepsInsertionOrder", testSameInstantKeepsInsertionOrder},
		{"AvailabilityAndArtifactStatus", testAvailabilityAndArtifactStatus},
		{"DownloaderIsKept", testDownloaderIsKept},
		{"OneDefaultPerHardwareType", testOneDefaultPerHardwareType},
		{"ConcurrentSetDefaultKeepsOneDefault", testConcurrentSetDefaultKeepsOneDefault},
		{"DeleteKeepsHistory", testDeleteKeepsHistory},
		{"HistoryFiltersNewestFirst", testHistoryFiltersNewestFirst},
		{"JournalAppendAndRead", testJournalAppendAndRead},
		{"JournalTailMissesNothingUnderConcurrentAppends", testJournalTailMissesNothing},
		{"JournalCompactKeepsSnapshotAndTail", testJournalCompact},
		{"NodesPutListDelete", testNodes},
		{"RacksPutList", testRacks},
		{"UpdateCommitsAllOrNothing", testUpdateCommitsAllOrNothing},
		{"UpdateRollsBackWhenTheContextEnds", testUpdateRollsBackWhenTheContextEnds},
		{"UpdateRollsBackOnPanic", testUpdateRollsBackOnPanic},
		{"ReopenKeepsData", testReopenKeepsData},
		{"MigrationsAppliedTwiceAreANoOp", testMigrationsAppliedTwiceAreANoOp},
		{"ConcurrentOpensOfFreshStorage", testConcurrentOpensOfFreshStorage},
		{"ConcurrentWritersInTwoStores", testConcurrentWritersInTwoStores},
		{"ClosedStoreRefusesCalls", testClosedStoreRefusesCalls},
		{"AuditAppendListFilterPage", testAuditAppendListFilterPage},
		{"AuditLargeBatchIsIndexedByEveryNode", testAuditLargeBatchIsIndexedByEveryNode},
		{"AuditPruneKeepsTheRetentionWindow", testAuditPruneKeepsTheRetentionWindow},
	}
	tests = append(tests, claimContract...)
	tests = append(tests, ownerContract...)
	tests = append(tests, rackJournalContract...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, b) })
	}
}

// open opens a store on location and closes it when the test ends,
// failing the test if Close fails.
func open(t *testing.T, b Backend, location string, now func() time.Time) store.Store {
	t.Helper()
	s, err := b.Open(t.Context(), location, now)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

// openFresh opens a store on fresh storage with a ticking clock.
func openFresh(t *testing.T, b Backend) (store.Store, *clock) {
	t.Helper()
	c := newClock()
	return open(t, b, b.Fresh(t), c.Now), c
}

// clock is a test clock that moves one second forward on every reading,
// so that every stamped time differs and orders as the calls did.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)}
}

// Now returns the next second.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// manifest is a firmware manifest whose spacing, key order and escapes
// must survive a round trip as they are.
func manifest(product, milestone string) string {
	return fmt.Sprintf(`{"ProductName": %q,  "Milestones":[{"Name": %q, "State":"Released",
	  "BoardSKUs": [] }], "zNote": "kept as given: caf\u00e9 \u2713", "aLast": 1}`, product, milestone)
}

// object is a valid firmware object with two artifacts.
func object(id, hardwareType string) store.FirmwareObject {
	return store.FirmwareObject{
		ID:           id,
		HardwareType: hardwareType,
		ConfigJSON:   manifest("DGXGB200", id),
		Artifacts: []store.Artifact{
			{Name: "nvfw_GB200-P4975_0004_250210.1.0_prod-signed.fwpkg", Location: "https://artifacts.example/fw/bmc.fwpkg",
				SHA256: "ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789", FirmwareType: "prod"},
			{Name: "cpld.fwpkg", Location: "file:///srv/firmware/cpld.fwpkg", FirmwareType: "dev"},
		},
	}
}

// create stores obj or fails the test.
func create(t *testing.T, s store.Catalog, obj store.FirmwareObject) store.FirmwareObject {
	t.Helper()
	got, err := s.CreateFirmwareObject(t.Context(), obj)
	if err != nil {
		t.Fatalf("create %s: %v", obj.ID, err)
	}
	return got
}

// get reads an object or fails the test.
func get(t *testing.T, s store.Catalog, id string) store.FirmwareObject {
	t.Helper()
	got, err := s.GetFirmwareObject(t.Context(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return got
}

// list lists objects or fails the test.
func list(t *testing.T, s store.Catalog, f store.ObjectFilter) []store.FirmwareObject {
	t.Helper()
	got, err := s.ListFirmwareObjects(t.Context(), f)
	if err != nil {
		t.Fatalf("list %+v: %v", f, err)
	}
	return got
}

// ids are the ids of objects, in order.
func ids(objs []store.FirmwareObject) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.ID
	}
	return out
}

// wantErr fails the test unless err wraps want.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}
