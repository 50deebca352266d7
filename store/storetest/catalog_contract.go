package storetest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
)

func testCreateAndGetRoundTrip(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	in := object("DGXGB200_1.3.6", "GB200")
	in.Artifacts[1].ArtifactStatus = store.ArtifactStatus{State: store.ArtifactReady, LocalPath: "/var/lib/rms/firmware/cpld.fwpkg"}
	in.UnavailableReason = "downloads pending"
	in.IsDefault = true                // ignored on create
	in.Created = time.Unix(1, 0).UTC() // ignored on create

	created := create(t, s, in)
	if created.ID != in.ID || created.HardwareType != "GB200" || created.ConfigJSON != in.ConfigJSON ||
		created.Available || created.UnavailableReason != "downloads pending" || created.IsDefault {
		t.Errorf("created = %+v", created)
	}
	if created.Created.IsZero() || created.Created.Equal(in.Created) || !created.Updated.Equal(created.Created) {
		t.Errorf("created/updated = %v/%v: the store stamps both, equal, on create", created.Created, created.Updated)
	}
	wantArts := []store.Artifact{
		{Name: in.Artifacts[0].Name, Location: in.Artifacts[0].Location,
			SHA256: strings.ToLower(in.Artifacts[0].SHA256), FirmwareType: "prod",
			ArtifactStatus: store.ArtifactStatus{State: store.ArtifactPending}, Updated: created.Created},
		{Name: "cpld.fwpkg", Location: in.Artifacts[1].Location, FirmwareType: "dev",
			ArtifactStatus: in.Artifacts[1].ArtifactStatus, Updated: created.Created},
	}
	if !reflect.DeepEqual(created.Artifacts, wantArts) {
		t.Errorf("created artifacts =\n%+v\nwant\n%+v", created.Artifacts, wantArts)
	}
	got := get(t, s, in.ID)
	if !reflect.DeepEqual(got, created) {
		t.Errorf("get =\n%+v\nwant what create returned\n%+v", got, created)
	}
	if got.ConfigJSON != in.ConfigJSON {
		t.Errorf("config_json not kept as given:\n%s\nwant\n%s", got.ConfigJSON, in.ConfigJSON)
	}

	bare := create(t, s, store.FirmwareObject{ID: "bare", ConfigJSON: `{}`})
	if got := get(t, s, "bare"); !reflect.DeepEqual(got, bare) || got.Artifacts != nil || got.HardwareType != "" {
		t.Errorf("object without artifacts or hardware type: get %+v, create %+v", got, bare)
	}
}

// The member that downloads an object is written on create and read back
// by every read, by another store on the same storage too (another
// member); a single rmsd's objects have none.
func testDownloaderIsKept(t *testing.T, b Backend) {
	loc := b.Fresh(t)
	s := open(t, b, loc, newClock().Now)
	in := object("DGXGB200_1.3.6", "GB200")
	in.Downloader = "rmsd-1"
	if created := create(t, s, in); created.Downloader != "rmsd-1" {
		t.Errorf("create returned downloader %q, want rmsd-1", created.Downloader)
	}
	create(t, s, object("DGXGB200_1.3.7", "GB200"))
	other := open(t, b, loc, newClock().Now)
	want := map[string]string{"DGXGB200_1.3.6": "rmsd-1", "DGXGB200_1.3.7": ""}
	for _, st := range []store.Store{s, other} {
		for id, downloader := range want {
			if got := get(t, st, id); got.Downloader != downloader {
				t.Errorf("get %s: downloader %q, want %q", id, got.Downloader, downloader)
			}
		}
		for _, o := range list(t, st, store.ObjectFilter{HardwareType: "GB200"}) {
			if o.Downloader != want[o.ID] {
				t.Errorf("list: %s has downloader %q, want %q", o.ID, o.Downloader, want[o.ID])
			}
		}
	}
	if err := other.SetObjectAvailability(t.Context(), "DGXGB200_1.3.6", true, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := other.SetDefaultFirmwareObject(t.Context(), "DGXGB200_1.3.6"); err != nil || got.Downloader != "rmsd-1" {
		t.Errorf("set default: %+v, %v; want downloader rmsd-1", got, err)
	}
	if got, err := s.DefaultFirmwareObject(t.Context(), "GB200"); err != nil || got.ID != "DGXGB200_1.3.6" || got.Downloader != "rmsd-1" || !got.Available {
		t.Errorf("default after an availability change: %+v, %v; want DGXGB200_1.3.6, available, downloader rmsd-1", got, err)
	}
}

func testCreateRefusesATakenID(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	first := create(t, s, object("X_1", "GB200"))
	again := object("X_1", "GB300")
	again.ConfigJSON = `{"other": true}`
	_, err := s.CreateFirmwareObject(t.Context(), again)
	wantErr(t, "create a taken id", err, store.ErrExists)
	if got := get(t, s, "X_1"); !reflect.DeepEqual(got, first) {
		t.Errorf("the first object changed: %+v", got)
	}
}

func testCreateRefusesInvalidObjects(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	tests := []struct {
		name string
		give func(o *store.FirmwareObject)
	}{
		{"empty id", func(o *store.FirmwareObject) { o.ID = "" }},
		{"config not JSON", func(o *store.FirmwareObject) { o.ConfigJSON = `{"ProductName":` }},
		{"empty config", func(o *store.FirmwareObject) { o.ConfigJSON = "" }},
		{"available with a reason", func(o *store.FirmwareObject) { o.Available, o.UnavailableReason = true, "why" }},
		{"artifact without a name", func(o *store.FirmwareObject) { o.Artifacts[1].Name = "" }},
		{"artifact listed twice", func(o *store.FirmwareObject) { o.Artifacts[1].Name = o.Artifacts[0].Name }},
		{"short digest", func(o *store.FirmwareObject) { o.Artifacts[0].SHA256 = "abc" }},
		{"digest not hex", func(o *store.FirmwareObject) { o.Artifacts[0].SHA256 = strings.Repeat("g", 64) }},
		{"unknown state", func(o *store.FirmwareObject) { o.Artifacts[0].State = "lost" }},
		{"ready without a path", func(o *store.FirmwareObject) { o.Artifacts[0].State = store.ArtifactReady }},
		{"failed without an error", func(o *store.FirmwareObject) { o.Artifacts[0].State = store.ArtifactFailed }},
		{"pending with an error", func(o *store.FirmwareObject) { o.Artifacts[0].Error = "boom" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := object("INVALID_1", "GB200")
			tt.give(&o)
			_, err := s.CreateFirmwareObject(t.Context(), o)
			wantErr(t, "create", err, store.ErrInvalid)
		})
	}
	if got := list(t, s, store.ObjectFilter{}); len(got) != 0 {
		t.Errorf("refused objects were stored: %v", ids(got))
	}
}

func testMissingObjectsAreNotFound(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	create(t, s, object("HERE_1", "GB200"))
	ctx := t.Context()
	_, err := s.GetFirmwareObject(ctx, "GONE_1")
	wantErr(t, "get", err, store.ErrNotFound)
	_, err = s.DeleteFirmwareObject(ctx, "GONE_1")
	wantErr(t, "delete", err, store.ErrNotFound)
	_, err = s.SetDefaultFirmwareObject(ctx, "GONE_1")
	wantErr(t, "set default", err, store.ErrNotFound)
	_, err = s.DefaultFirmwareObject(ctx, "GB200")
	wantErr(t, "default of a hardware type without one", err, store.ErrNotFound)
	wantErr(t, "set availability", s.SetObjectAvailability(ctx, "GONE_1", true, ""), store.ErrNotFound)
	ready := store.ArtifactStatus{State: store.ArtifactReady, LocalPath: "/x"}
	wantErr(t, "artifact of a missing object", s.SetArtifactStatus(ctx, "GONE_1", "cpld.fwpkg", ready), store.ErrNotFound)
	wantErr(t, "missing artifact", s.SetArtifactStatus(ctx, "HERE_1", "absent.fwpkg", ready), store.ErrNotFound)
	for _, a := range get(t, s, "HERE_1").Artifacts {
		if a.State != store.ArtifactPending {
			t.Errorf("artifact %s changed by a refused call: %+v", a.Name, a)
		}
	}
}

func testListFiltersAreANDedNewestFirst(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	for _, o := range []struct{ id, hw string }{{"A_1", "GB200"}, {"B_1", "GB300"}, {"C_1", "GB200"}, {"D_1", "GB200"}, {"E_1", "GB300"}} {
		create(t, s, object(o.id, o.hw))
	}
	for _, id := range []string{"A_1", "D_1", "E_1"} {
		if err := s.SetObjectAvailability(t.Context(), id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetDefaultFirmwareObject(t.Context(), "C_1"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give store.ObjectFilter
		want []string
	}{
		{store.ObjectFilter{}, []string{"E_1", "D_1", "C_1", "B_1", "A_1"}},
		{store.ObjectFilter{HardwareType: "GB200"}, []string{"D_1", "C_1", "A_1"}},
		{store.ObjectFilter{OnlyAvailable: true}, []string{"E_1", "D_1", "A_1"}},
		{store.ObjectFilter{OnlyAvailable: true, HardwareType: "GB200"}, []string{"D_1", "A_1"}},
		{store.ObjectFilter{OnlyAvailable: true, HardwareType: "GB300"}, []string{"E_1"}},
		{store.ObjectFilter{HardwareType: "VR-NVL72"}, []string{}},
	}
	for _, tt := range tests {
		got := list(t, s, tt.give)
		if !slices.Equal(ids(got), tt.want) {
			t.Errorf("list %+v = %v, want %v", tt.give, ids(got), tt.want)
		}
		for _, o := range got {
			if want := get(t, s, o.ID); !reflect.DeepEqual(o, want) {
				t.Errorf("list %+v: %s =\n%+v\nwant what get returns\n%+v", tt.give, o.ID, o, want)
			}
		}
	}
}

func testSameInstantKeepsInsertionOrder(t *testing.T, b Backend) {
	instant := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	s := open(t, b, b.Fresh(t), func() time.Time { return instant })
	for _, id := range []string{"M_1", "Z_1", "A_1"} {
		create(t, s, object(id, "GB200"))
		if _, err := s.RecordApply(t.Context(), store.ApplyRecord{ObjectID: id, RackID: "rack-1"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ids(list(t, s, store.ObjectFilter{})); !slices.Equal(got, []string{"A_1", "Z_1", "M_1"}) {
		t.Errorf("objects created at one instant list as %v, want the later stored first", got)
	}
	history, err := s.ListApplyHistory(t.Context(), store.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range history {
		order = append(order, r.ObjectID)
		if !r.AppliedAt.Equal(instant) {
			t.Errorf("applied at %v, want %v", r.AppliedAt, instant)
		}
	}
	if !slices.Equal(order, []string{"A_1", "Z_1", "M_1"}) {
		t.Errorf("records of one instant list as %v, want the later written first", order)
	}
}

func testAvailabilityAndArtifactStatus(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	created := create(t, s, object("AV_1", "GB200"))
	name := created.Artifacts[0].Name

	steps := []store.ArtifactStatus{
		{State: store.ArtifactDownloading, LocalPath: "/fw/.part-1"},
		{State: store.ArtifactFailed, Error: "sha256 mismatch: got 00ff"},
		{State: store.ArtifactReady, LocalPath: "/fw/bmc.fwpkg"},
	}
	last := created.Updated
	for _, st := range steps {
		if err := s.SetArtifactStatus(ctx, "AV_1", name, st); err != nil {
			t.Fatalf("set %s: %v", st.State, err)
		}
		got := get(t, s, "AV_1")
		if got.Artifacts[0].ArtifactStatus != st {
			t.Errorf("artifact status = %+v, want %+v", got.Artifacts[0].ArtifactStatus, st)
		}
		if !got.Updated.After(last) || !got.Artifacts[0].Updated.Equal(got.Updated) {
			t.Errorf("after %s: object updated %v, artifact updated %v, previously %v", st.State, got.Updated, got.Artifacts[0].Updated, last)
		}
		if got.Artifacts[1] != created.Artifacts[1] {
			t.Errorf("the other artifact changed: %+v", got.Artifacts[1])
		}
		last = got.Updated
	}
	err := s.SetArtifactStatus(ctx, "AV_1", name, store.ArtifactStatus{State: store.ArtifactReady})
	wantErr(t, "ready without a path", err, store.ErrInvalid)
	err = s.SetArtifactStatus(ctx, "AV_1", name, store.ArtifactStatus{State: "unknown", LocalPath: "/x"})
	wantErr(t, "unknown state", err, store.ErrInvalid)
	if got := get(t, s, "AV_1"); got.Artifacts[0].ArtifactStatus != steps[2] || !got.Updated.Equal(last) {
		t.Errorf("a refused status changed the object: %+v", got)
	}

	if err := s.SetObjectAvailability(ctx, "AV_1", false, "artifact cpld.fwpkg: 404 Not Found"); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "AV_1"); got.Available || got.UnavailableReason != "artifact cpld.fwpkg: 404 Not Found" || !got.Updated.After(last) {
		t.Errorf("after an unavailability reason: %+v", got)
	}
	if err := s.SetObjectAvailability(ctx, "AV_1", true, ""); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, "AV_1")
	if !got.Available || got.UnavailableReason != "" {
		t.Errorf("after available: %+v", got)
	}
	wantErr(t, "available with a reason", s.SetObjectAvailability(ctx, "AV_1", true, "why"), store.ErrInvalid)
	if again := get(t, s, "AV_1"); !reflect.DeepEqual(again, got) {
		t.Errorf("a refused availability changed the object: %+v", again)
	}
	if !got.Created.Equal(created.Created) {
		t.Errorf("created moved from %v to %v", created.Created, got.Created)
	}
}
