package storetest

import (
	"reflect"
	"slices"
	"testing"

	"github.com/rmsd/rmsd/store"
)

func testHistoryFiltersNewestFirst(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	give := []store.ApplyRecord{
		{ObjectID: "A_1", RackID: "rack-1", NodeIDs: []string{"compute-2", "compute-1", "switch-1"},
			FirmwareType: "prod", HardwareType: "GB200", JobID: "job-1", Operation: "ApplyStoredFirmwareObject", Requester: "CN=nico"},
		{ObjectID: "B_1", RackID: "rack-1", FirmwareType: "dev", HardwareType: "GB300", JobID: "job-2", Operation: "ApplyStoredSwitchSystemImage"},
		{ObjectID: "A_1", RackID: "rack-2", NodeIDs: []string{"compute-9"}, JobID: "job-3"},
		{ObjectID: "A_1", RackID: "rack-3", JobID: "job-4"},
	}
	var written []store.ApplyRecord
	for _, r := range give {
		got, err := s.RecordApply(ctx, r)
		if err != nil {
			t.Fatalf("record %+v: %v", r, err)
		}
		want := r
		want.Seq, want.AppliedAt = got.Seq, got.AppliedAt
		if !reflect.DeepEqual(got, want) || got.AppliedAt.IsZero() {
			t.Errorf("record returned %+v, want %+v with seq and time set", got, r)
		}
		if n := len(written); n > 0 && (got.Seq <= written[n-1].Seq || !got.AppliedAt.After(written[n-1].AppliedAt)) {
			t.Errorf("record %d: seq %d at %v after seq %d at %v", n, got.Seq, got.AppliedAt, written[n-1].Seq, written[n-1].AppliedAt)
		}
		written = append(written, got)
	}
	tests := []struct {
		give store.HistoryFilter
		want []int // indexes into written, in the order expected
	}{
		{store.HistoryFilter{}, []int{3, 2, 1, 0}},
		{store.HistoryFilter{ObjectID: "A_1"}, []int{3, 2, 0}},
		{store.HistoryFilter{RackIDs: []string{"rack-1", "rack-2"}}, []int{2, 1, 0}},
		{store.HistoryFilter{ObjectID: "A_1", RackIDs: []string{"rack-1"}}, []int{0}},
		{store.HistoryFilter{ObjectID: "B_1", RackIDs: []string{"rack-2", "rack-3"}}, nil},
		{store.HistoryFilter{ObjectID: "NONE"}, nil},
	}
	for _, tt := range tests {
		got, err := s.ListApplyHistory(ctx, tt.give)
		if err != nil {
			t.Fatalf("history %+v: %v", tt.give, err)
		}
		var want []store.ApplyRecord
		for _, i := range tt.want {
			want = append(want, written[i])
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("history %+v =\n%+v\nwant\n%+v", tt.give, got, want)
		}
	}
	for _, bad := range []store.ApplyRecord{{RackID: "rack-1"}, {ObjectID: "A_1"}} {
		_, err := s.RecordApply(ctx, bad)
		wantErr(t, "record without object or rack", err, store.ErrInvalid)
	}
	if all, _ := s.ListApplyHistory(ctx, store.HistoryFilter{}); len(all) != len(give) {
		t.Errorf("history has %d records after refused ones, want %d", len(all), len(give))
	}
	if !slices.Equal(written[0].NodeIDs, give[0].NodeIDs) {
		t.Errorf("node ids reordered: %v", written[0].NodeIDs)
	}
}
