package catalog_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
)

func TestService_AddDownloadsEveryArtifactThenTheObjectIsAvailable(t *testing.T) {
	fx := newFixture(t, fixtureOptions{concurrency: 2})
	rel := fx.publish(simrelease.Options{})
	obj := fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl", AccessToken: hw.NewSecret("NOAUTH")})
	if obj.ID != rel.ID || obj.Available || obj.UnavailableReason != "" || obj.ConfigJSON != rel.ConfigJSON ||
		obj.HardwareType != "gb200-nvl" || !obj.IsDefault || obj.Created.IsZero() { // the first of its hardware type
		t.Errorf("added object %+v", obj.FirmwareObject)
	}
	if len(obj.Metadata.DeviceComponents) == 0 || len(obj.Metadata.SwitchSystemImages) != 1 {
		t.Errorf("metadata %+v", obj.Metadata)
	}
	var names []string
	for _, a := range rel.Artifacts() {
		names = append(names, a.Name)
	}
	var stored []string
	for _, a := range obj.Artifacts {
		stored = append(stored, a.Name)
		if a.FirmwareType != "prod" || len(a.SHA256) != 64 || !strings.HasPrefix(a.Location, fx.srv.URL()) {
			t.Errorf("artifact as stored: %+v", a)
		}
	}
	slices.Sort(names)
	slices.Sort(stored)
	if !slices.Equal(names, stored) {
		t.Errorf("stored artifacts %v, want %v", stored, names)
	}

	got := fx.waitObject(rel.ID, "available", available)
	cache := filepath.Join(fx.dir, "objects", rel.ID)
	for _, a := range rel.Artifacts() {
		st := artifactState(got, a.Name)
		if st.State != store.ArtifactReady || st.LocalPath != filepath.Join(cache, a.Name) || st.Error != "" {
			t.Errorf("artifact %s: %+v", a.Name, st)
		}
		if fi, err := os.Stat(filepath.Join(cache, a.Name)); err != nil || fi.Size() != a.Size {
			t.Errorf("cached %s: %v, %v", a.Name, fi, err)
		}
	}
	if got.UnavailableReason != "" || !got.Updated.After(got.Created) {
		t.Errorf("available object %+v", got)
	}
	if n := fx.srv.MaxInFlight(); n < 1 || n > 2 {
		t.Errorf("%d downloads ran at once; the downloader allows 2", n)
	}
	// The line follows the store update the wait above saw.
	if l := fx.waitLog(`"firmware object available"`, rel.ID); len(l) != 1 {
		t.Errorf("want one line announcing the object available, got %q", l)
	}
	logs := fx.logs.String()
	if added, avail := strings.Index(logs, `"firmware object added"`), strings.Index(logs, `"firmware object available"`); added < 0 || added > avail {
		t.Errorf("the object was logged available before it was logged added:\n%s", logs)
	}
}

func TestService_CloseCancelsRunningDownloadsAndWaitsForThem(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{})
	fx.srv.SetFault(rel.HMC.Path, artifactsim.Fault{Hold: true})
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	svc, st := fx.svc, fx.store
	svc.Close()       // returns only once the download goroutines have ended
	fx.waitReleased() // the server sees the cancelled request go
	obj, err := st.GetFirmwareObject(testCtx(t), rel.ID)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Available || obj.UnavailableReason != "" {
		t.Errorf("a download cut short by Close must leave the object unavailable without a reason (the next start re-verifies it): %+v", obj)
	}
	if a := artifactState(obj, rel.HMC.Name); a.State != store.ArtifactDownloading {
		t.Errorf("held artifact %+v", a)
	}
	if tmp := tempFiles(t, fx.dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	_, err = svc.Add(testCtx(t), catalog.AddRequest{ConfigJSON: fx.publish(simrelease.Options{Milestone: "late"}).ConfigJSON, HardwareType: "gb200-nvl"})
	if !errors.Is(err, catalog.ErrClosed) {
		t.Errorf("add after Close: %v, want ErrClosed", err)
	}
	svc.Close() // a second Close returns at once
}

func TestService_AddRefusesWhatCannotBeAccepted(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{})
	outside := filepath.Join(t.TempDir(), "bmc.fwpkg")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileSource := strings.Replace(rel.ConfigJSON, `"Location":"`+rel.HMC.URL+`","LocationType":"HTTPS"`,
		`"Location":"`+outside+`","LocationType":"file"`, 1)
	const token = "s3cr3t\nInjected: header"
	tests := []struct {
		name string
		give catalog.AddRequest
		want []string
		also error
	}{
		{"not a manifest", catalog.AddRequest{ConfigJSON: `[1, 2]`}, []string{"config_json: must be a JSON object, got an array"}, manifest.ErrInvalid},
		{"no milestone", catalog.AddRequest{ConfigJSON: `{"ProductName": "DGXGB200", "Milestones": []}`},
			[]string{"Milestones must contain exactly one milestone, got 0"}, manifest.ErrInvalid},
		{"no hardware type", catalog.AddRequest{ConfigJSON: rel.ConfigJSON}, []string{"hardware_type is required"}, nil},
		{"file source outside firmware_dir", catalog.AddRequest{ConfigJSON: fileSource, HardwareType: "gb200-nvl"},
			[]string{"config_json: an artifact cannot be fetched", "artifact bmc.fwpkg from " + outside, "outside the directory"}, nil},
		{"token with a line break", catalog.AddRequest{ConfigJSON: rel.ConfigJSON, AccessToken: hw.NewSecret(token), HardwareType: "gb200-nvl"},
			[]string{"access_token holds a control character at byte 6"}, nil},
		{"token too long", catalog.AddRequest{ConfigJSON: rel.ConfigJSON, AccessToken: hw.NewSecret(strings.Repeat("k", 8193)), HardwareType: "gb200-nvl"},
			[]string{"access_token is 8193 bytes long; at most 8192"}, nil},
		{"blank token around a line break", catalog.AddRequest{ConfigJSON: rel.ConfigJSON, AccessToken: hw.NewSecret(" s3cr3t\r\n"), HardwareType: "gb200-nvl"},
			[]string{"access_token holds a control character at byte 7"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fx.svc.Add(testCtx(t), tt.give)
			if !errors.Is(err, catalog.ErrInvalid) || (tt.also != nil && !errors.Is(err, tt.also)) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the refusal quotes the token: %q", err)
			}
		})
	}
	objs, err := fx.svc.List(testCtx(t), store.ObjectFilter{})
	if err != nil || len(objs) != 0 {
		t.Errorf("refused objects were stored: %v, %v", objs, err)
	}
	if len(fx.srv.Requests()) != 0 {
		t.Errorf("a refused add fetched something: %v", fx.srv.Requests())
	}
}

func TestService_BlankAndNOAUTHTokensAreNone(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	for i, tok := range []string{"", " \t\r\n", "NOAUTH", " NOAUTH\n"} {
		// Artifactory locations: a token, if there were one, would go along.
		rel := fx.publish(simrelease.Options{Milestone: fmt.Sprintf("blank-%d", i), LocationType: "Artifactory"})
		fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, AccessToken: hw.NewSecret(tok), HardwareType: "gb200-nvl"})
		fx.waitObject(rel.ID, "available", available)
	}
	reqs := fx.srv.Requests()
	for _, r := range reqs {
		if r.TokenSent {
			t.Errorf("a token went with %s", r.Path)
		}
	}
	if len(reqs) != 4*6 {
		t.Errorf("%d requests, want 24", len(reqs))
	}
	// The same with a real token sends it: the check above can fail.
	rel := fx.publish(simrelease.Options{Milestone: "token", LocationType: "Artifactory"})
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, AccessToken: hw.NewSecret("k"), HardwareType: "gb200-nvl"})
	fx.waitObject(rel.ID, "available", available)
	if reqs := fx.srv.Requests(); !reqs[len(reqs)-1].TokenSent {
		t.Error("no token sent to an artifactory location")
	}
}

func TestService_AnObjectWithNothingToDownloadIsAvailableAtOnce(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	obj := fx.add(catalog.AddRequest{HardwareType: "any", SetDefault: true, ConfigJSON: `{"ProductName": "DGXGB200", "Milestones": [{"Name": "versions-only",
		"BoardSKUs": [{"Type": "Compute Node", "Components": {"Firmware": [{"Component": "CX7", "Version": "28.44.1036", "Locations": []}]}}]}]}`})
	if !obj.Available || !obj.IsDefault || len(obj.Artifacts) != 0 {
		t.Errorf("object %+v", obj.FirmwareObject)
	}
	if _, err := os.Stat(filepath.Join(fx.dir, "objects", obj.ID)); !os.IsNotExist(err) {
		t.Errorf("a cache directory for an object with nothing to cache: %v", err)
	}
}

func TestService_DeleteStopsTheDownloadAndRemovesTheCache(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{})
	fx.srv.SetFault(rel.PowerShelf.Path, artifactsim.Fault{Hold: true})
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	// The other five land while the shelf package is held.
	fx.waitObject(rel.ID, "five artifacts cached", func(o store.FirmwareObject) bool {
		n := 0
		for _, a := range o.Artifacts {
			if a.State == store.ArtifactReady {
				n++
			}
		}
		return n == 5
	})
	if err := fx.svc.Delete(testCtx(t), rel.ID); err != nil {
		t.Fatal(err)
	}
	fx.waitReleased()
	if _, err := os.Stat(filepath.Join(fx.dir, "objects", rel.ID)); !os.IsNotExist(err) {
		t.Errorf("cache directory after delete: %v", err)
	}
	if _, err := fx.svc.Get(testCtx(t), rel.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if err := fx.svc.Delete(testCtx(t), rel.ID); !errors.Is(err, catalog.ErrNotFound) || err.Error() != `firmware object "DGXGB200_1.3.7" not found` {
		t.Errorf("second delete: %v", err)
	}
	// The id is free again, and the new object downloads afresh.
	fx.srv.SetFault(rel.PowerShelf.Path, artifactsim.Fault{})
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	fx.waitObject(rel.ID, "available", available)
}

// tempFiles lists the temporary download files below dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".part-") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Reads answer the metadata of the manifest as stored, each a copy of its
// own: what one caller changes, the next read does not see.
func TestService_ReadsAnswerMetadataCopies(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	added := fx.add(catalog.AddRequest{HardwareType: "any", ConfigJSON: `{"ProductName": "DGXGB200", "Milestones": [{"Name": "copies",
		"BoardSKUs": [{"Type": "Compute Node", "Components": {"Firmware": [{"Component": "CX7", "Version": "28.44.1036", "Locations": []}]}}]}]}`})
	first, err := fx.svc.Get(testCtx(t), added.ID)
	if err != nil || len(first.Metadata.DeviceComponents) == 0 || len(first.Metadata.DeviceComponents[0].Components) != 1 {
		t.Fatalf("get: %+v, %v", first.Metadata, err)
	}
	first.Metadata.DeviceComponents[0].Components[0].Name = "changed by a caller"
	again, err := fx.svc.Get(testCtx(t), added.ID)
	if err != nil || again.Metadata.DeviceComponents[0].Components[0].Name != "CX7" {
		t.Fatalf("second get: %+v, %v", again.Metadata, err)
	}
	listed, err := fx.svc.List(testCtx(t), store.ObjectFilter{})
	if err != nil || len(listed) != 1 || listed[0].Metadata.DeviceComponents[0].Components[0].Name != "CX7" {
		t.Fatalf("list: %+v, %v", listed, err)
	}
}
