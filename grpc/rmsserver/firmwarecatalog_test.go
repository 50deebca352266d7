package rmsserver

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
)

// describeMetadata renders a FirmwareObjectMetadata one line per
// component and image, for comparison.
func describeMetadata(md *rmspb.FirmwareObjectMetadata) []string {
	var out []string
	for _, dc := range md.GetDeviceComponents() {
		attrs := dc.GetNodeDescriptor().GetAttributes()
		id := fmt.Sprintf("%s %s/%s/%s [%s]", dc.GetNodeType(), attrs[hw.AttrRole], attrs[hw.AttrVendor], attrs[hw.AttrProductFamily], dc.GetDeviceType())
		for _, c := range dc.GetComponents() {
			var subs, arts []string
			for _, s := range c.GetSubcomponents() {
				subs = append(subs, s.GetName()+"="+s.GetVersion()+skuSuffix(s.GetSkuId()))
			}
			for _, a := range c.GetArtifacts() {
				arts = append(arts, fmt.Sprintf("%s:%s->%q(%s)", a.GetFirmwareType(), a.GetFilename(), a.GetTarget(), a.GetBundle()))
			}
			out = append(out, fmt.Sprintf("%s %s %s bundle=%q source=%q subs=[%s] %s", id, c.GetName(), c.GetVersion(), c.GetBundle(),
				c.GetSourceComponent(), strings.Join(subs, " "), strings.Join(arts, " ")))
		}
	}
	for _, img := range md.GetSwitchSystemImages() {
		out = append(out, fmt.Sprintf("image %s %s %q %s required=%v", img.GetSoftwareType(), img.GetVersion(), img.GetPackageName(),
			img.GetImageFilename(), img.GetRequired()))
	}
	return out
}

func skuSuffix(sku string) string {
	if sku == "" {
		return ""
	}
	return "@" + sku
}

func TestAddFirmwareObject_AnswersAtOnceThenDownloadsUntilAvailable(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	rel := cs.publish(simrelease.Options{})
	cs.art.SetFault(rel.NVOS.Path, artifactsim.Fault{Hold: true}) // to see the object before it is available
	before := time.Now().Add(-time.Second)
	obj := cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl", AccessToken: proto.String("NOAUTH")})
	// The first object of its hardware type is its default.
	if obj.GetId() != "DGXGB200_1.3.7" || obj.GetConfigJson() != rel.ConfigJSON || obj.GetAvailable() || !obj.GetIsDefault() ||
		obj.GetHardwareType() != "gb200-nvl" {
		t.Errorf("added: id %q available %v default %v hardware_type %q, config_json as given %v", obj.GetId(), obj.GetAvailable(),
			obj.GetIsDefault(), obj.GetHardwareType(), obj.GetConfigJson() == rel.ConfigJSON)
	}
	created := obj.GetCreated().AsTime()
	if created.Before(before) || created.After(time.Now()) || !obj.GetUpdated().AsTime().Equal(created) {
		t.Errorf("created %v updated %v", created, obj.GetUpdated().AsTime())
	}
	if err := cs.art.WaitHeld(rpcContext(t), 1); err != nil {
		t.Fatal(err)
	}
	if got := cs.getObject(rel.ID); got.GetAvailable() {
		t.Fatal("available while its NVOS image is still downloading")
	}
	cs.art.Release(1)
	got := cs.waitAvailable(rel.ID)
	if !got.GetUpdated().AsTime().After(created) || !got.GetCreated().AsTime().Equal(created) {
		t.Errorf("available object: created %v updated %v (added at %v)", got.GetCreated().AsTime(), got.GetUpdated().AsTime(), created)
	}
	want := []string{
		`COMPUTE_GB200_NVIDIA compute/nvidia/gb200 [Compute Node] CX7 28.44.1036 bundle="" source="CX7" subs=[] `,
		`COMPUTE_GB200_NVIDIA compute/nvidia/gb200 [Compute Node] HMC GB200Nvl-25.04-2 bundle="compute_tray_hmc_bundle" source="HMC" subs=[HMC=GB200Nvl-25.04-2 GPU=97.00.A5.00.01] prod:` +
			rel.HMC.Name + `->"/redfish/v1/Chassis/HGX_Chassis_0"(compute_tray_hmc_bundle)`,
		`COMPUTE_GB200_NVIDIA compute/nvidia/gb200 [Compute Node] BMC GB200Nvl-25.04-1 bundle="compute_tray_bmc_bundle" source="BMC" subs=[BMC=GB200Nvl-25.04-1 EROT=01.04.0031.0000_n04] prod:` +
			rel.ComputeBMC.Name + `->"bmc"(compute_tray_bmc_bundle)`,
		`POWERSHELF_GB200_LITEON power_shelf/liteon/gb200 [Power Shelf] PowerShelfFW PR-2025.04 bundle="" source="Powershelf FW" subs=[PR1 PSU=C1.07@PR1 PR1 PMC=1.2.8@PR1] prod:` +
			rel.PowerShelf.Name + `->""()`,
		`SWITCH_GB200_NVIDIA switch/nvidia/gb200 [Switch Tray] BMC 88.0002.1400 bundle="nvswitch_tray_bmc_bundle" source="BMC+FPGA+EROT" subs=[EROT=01.04.0031.0000_n04 BMC=88.0002.1400 FPGA=0.1C] prod:` +
			rel.SwitchBMC.Name + `->"bmc"(nvswitch_tray_bmc_bundle)`,
		`SWITCH_GB200_NVIDIA switch/nvidia/gb200 [Switch Tray] CPLD 0.1.0.7 bundle="nvswitch_tray_cpld_bundle" source="CPLD" subs=[CPLD1=0.1.0.7 CPLD2=0.1.0.7] prod:` +
			rel.SwitchCPLD.Name + `->"cpld"(nvswitch_tray_cpld_bundle)`,
		`POWERSHELF_GB200_DELTA power_shelf/delta/gb200 [Power Shelf] PowerShelfFW PR-2025.04 bundle="" source="Powershelf FW" subs=[PR1 PSU=C1.07@PR1 PR1 PMC=1.2.8@PR1] prod:` +
			rel.PowerShelf.Name + `->""()`,
		`NODE_TYPE_UNSPECIFIED compute/wiwynn/gb200 [Compute Node] CX7 28.44.1036 bundle="" source="CX7" subs=[] `,
		`NODE_TYPE_UNSPECIFIED compute/wiwynn/gb200 [Compute Node] HMC GB200Nvl-25.04-2 bundle="compute_tray_hmc_bundle" source="HMC" subs=[HMC=GB200Nvl-25.04-2 GPU=97.00.A5.00.01] prod:` +
			rel.HMC.Name + `->"/redfish/v1/Chassis/HGX_Chassis_0"(compute_tray_hmc_bundle)`,
		`NODE_TYPE_UNSPECIFIED compute/wiwynn/gb200 [Compute Node] BMC GB200Nvl-25.04-1 bundle="compute_tray_bmc_bundle" source="BMC" subs=[BMC=GB200Nvl-25.04-1 EROT=01.04.0031.0000_n04] prod:` +
			rel.ComputeBMC.Name + `->"bmc"(compute_tray_bmc_bundle)`,
		`image prod 25.02.2553 "` + rel.NVOS.Name + `" ` + rel.NVOS.Name + ` required=true`,
	}
	for name, md := range map[string]*rmspb.FirmwareObjectMetadata{"AddFirmwareObject": obj.GetMetadata(), "GetFirmwareObject": got.GetMetadata()} {
		// The SKUs route to every product family's node types
		// (TestApplyStoredFirmwareObject_RoutesBySKUTypeWhateverTheProduct);
		// the GB200 ones are spelt out here.
		var gb200 []string
		for _, line := range describeMetadata(md) {
			if strings.Contains(line, "/gb200 [") || strings.HasPrefix(line, "image ") {
				gb200 = append(gb200, line)
			}
		}
		if got := gb200; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s metadata\n got:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for _, a := range rel.Artifacts() {
		b, err := os.ReadFile(filepath.Join(cs.cacheDir(rel.ID), a.Name))
		if err != nil || int64(len(b)) != a.Size {
			t.Errorf("cached %s: %d bytes, %v", a.Name, len(b), err)
		}
	}
	stored, err := cs.store.GetFirmwareObject(rpcContext(t), rel.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range stored.Artifacts {
		if a.State != store.ArtifactReady || a.LocalPath != filepath.Join(cs.cacheDir(rel.ID), a.Name) {
			t.Errorf("stored artifact %+v", a)
		}
	}
}

// ids returns the objects' ids, in order.
func objectIDs(objs []*rmspb.FirmwareObject) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.GetId())
	}
	return out
}

func TestListFirmwareObjects_FiltersAreANDedNewestFirst(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	adds := []struct {
		milestone, hwType string
		fails             bool
	}{
		{"1.0", "gb200-nvl", false},
		{"1.1", "gb300-nvl", false},
		{"1.2", "gb200-nvl", true},
		{"1.3", "any", false},
		{"1.4", "gb200-nvl", false},
	}
	for _, a := range adds {
		rel := cs.publish(simrelease.Options{Milestone: a.milestone})
		if a.fails {
			cs.art.SetFault(rel.SwitchBMC.Path, artifactsim.Fault{Status: 404})
		}
		cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: a.hwType})
		if a.fails {
			cs.waitFailed(rel.ID)
		} else {
			cs.waitAvailable(rel.ID)
		}
	}
	tests := []struct {
		give *rmspb.ListFirmwareObjectsRequest
		want []string
	}{
		{&rmspb.ListFirmwareObjectsRequest{}, []string{"DGXGB200_1.4", "DGXGB200_1.3", "DGXGB200_1.2", "DGXGB200_1.1", "DGXGB200_1.0"}},
		{&rmspb.ListFirmwareObjectsRequest{HardwareType: "gb200-nvl"}, []string{"DGXGB200_1.4", "DGXGB200_1.2", "DGXGB200_1.0"}},
		{&rmspb.ListFirmwareObjectsRequest{OnlyAvailable: true}, []string{"DGXGB200_1.4", "DGXGB200_1.3", "DGXGB200_1.1", "DGXGB200_1.0"}},
		{&rmspb.ListFirmwareObjectsRequest{OnlyAvailable: true, HardwareType: "gb200-nvl"}, []string{"DGXGB200_1.4", "DGXGB200_1.0"}},
		{&rmspb.ListFirmwareObjectsRequest{HardwareType: "any"}, []string{"DGXGB200_1.3"}},
		{&rmspb.ListFirmwareObjectsRequest{HardwareType: "vr-nvl72"}, []string{}},
	}
	for _, tt := range tests {
		resp, err := cs.client.ListFirmwareObjects(rpcContext(t), tt.give)
		if err != nil {
			t.Fatal(err)
		}
		if got := objectIDs(resp.GetObjects()); !slices.Equal(got, tt.want) {
			t.Errorf("list %v = %v, want %v", tt.give, got, tt.want)
		}
		for _, o := range resp.GetObjects() {
			if want := cs.getObject(o.GetId()); !proto.Equal(o, want) {
				t.Errorf("list %v: %s differs from what GetFirmwareObject answers", tt.give, o.GetId())
			}
		}
	}
}

func TestSetDefaultFirmwareObject_OneDefaultPerHardwareType(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	var ids []string
	for i, hwType := range []string{"gb200-nvl", "gb200-nvl", "gb300-nvl"} {
		rel := cs.publish(simrelease.Options{Milestone: fmt.Sprintf("2.%d", i)})
		// The first of a type is its default (upstream: set_default ||
		// no default yet), the second is not, the third asks to be.
		obj := cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: hwType, SetDefault: i == 2})
		if obj.GetIsDefault() != (i != 1) {
			t.Errorf("%s added with is_default %v", obj.GetId(), obj.GetIsDefault())
		}
		ids = append(ids, obj.GetId())
	}
	defaults := func() map[string]bool {
		resp, err := cs.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, o := range resp.GetObjects() {
			if o.GetIsDefault() {
				out[o.GetId()] = true
			}
		}
		return out
	}
	set := func(id string) *rmspb.FirmwareObject {
		resp, err := cs.client.SetDefaultFirmwareObject(rpcContext(t), &rmspb.SetDefaultFirmwareObjectRequest{ObjectId: id})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetObject()
	}
	if got := defaults(); len(got) != 2 || !got[ids[0]] || !got[ids[2]] {
		t.Fatalf("defaults after adding %v", got)
	}
	if o := set(ids[1]); !o.GetIsDefault() {
		t.Errorf("SetDefaultFirmwareObject answered %v", o)
	}
	if got := defaults(); len(got) != 2 || !got[ids[1]] || !got[ids[2]] {
		t.Fatalf("defaults after setting %s: %v", ids[1], got)
	}
	if o := set(ids[0]); !o.GetIsDefault() || o.GetId() != ids[0] || o.GetHardwareType() != "gb200-nvl" || o.GetMetadata() == nil {
		t.Errorf("SetDefaultFirmwareObject answered %v", o)
	}
	if got := defaults(); len(got) != 2 || !got[ids[0]] || !got[ids[2]] {
		t.Errorf("defaults %v, want %s and %s", got, ids[0], ids[2])
	}
	set(ids[1]) // the other gb200-nvl object replaces the first
	if got := defaults(); len(got) != 2 || !got[ids[1]] || !got[ids[2]] {
		t.Errorf("defaults %v, want %s and %s", got, ids[1], ids[2])
	}
	if cs.getObject(ids[0]).GetIsDefault() {
		t.Errorf("%s is still a default after another object of its type became it", ids[0])
	}
	set(ids[1]) // again: no change
	if got := defaults(); len(got) != 2 || !got[ids[1]] {
		t.Errorf("defaults after setting the default again %v", got)
	}
	_, err := cs.client.SetDefaultFirmwareObject(rpcContext(t), &rmspb.SetDefaultFirmwareObjectRequest{ObjectId: "DGXGB200_9.9"})
	if status.Code(err) != codes.NotFound || status.Convert(err).Message() != `firmware object "DGXGB200_9.9" not found` {
		t.Errorf("unknown object: %v", err)
	}
}

func TestDeleteFirmwareObject_DuringADownloadCancelsItRemovesTheCacheKeepsTheHistory(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	rel := cs.publish(simrelease.Options{})
	cs.art.SetFault(rel.HMC.Path, artifactsim.Fault{Hold: true})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl", SetDefault: true})
	if err := cs.art.WaitHeld(rpcContext(t), 1); err != nil {
		t.Fatal(err)
	}
	// ApplyStored* writes the history; it is not wired yet, so the test
	// writes a record as it would.
	if _, err := cs.store.RecordApply(rpcContext(t), store.ApplyRecord{ObjectID: rel.ID, RackID: "rack-1", NodeIDs: []string{"compute-1"},
		FirmwareType: "prod", HardwareType: "gb200-nvl", JobID: "job-1", Operation: "ApplyStoredFirmwareObject"}); err != nil {
		t.Fatal(err)
	}
	resp, err := cs.client.DeleteFirmwareObject(rpcContext(t), &rmspb.DeleteFirmwareObjectRequest{Id: rel.ID})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.GetResponse(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetMessage() != `firmware object "DGXGB200_1.3.7" deleted` {
		t.Errorf("delete: %v", r)
	}
	// Delete answers once the download has stopped: nothing is left of it.
	if _, err := os.Stat(cs.cacheDir(rel.ID)); !os.IsNotExist(err) {
		t.Errorf("cache directory after delete: %v", err)
	}
	cs.waitReleased()
	if cs.logs.count(`"firmware object download stopped"`, rel.ID, "deleted") != 1 {
		t.Errorf("no log line of the download stopped by the delete:\n%s", cs.logs)
	}
	_, err = cs.client.GetFirmwareObject(rpcContext(t), &rmspb.GetFirmwareObjectRequest{Id: rel.ID})
	if status.Code(err) != codes.NotFound {
		t.Errorf("get after delete: %v", err)
	}
	list, err := cs.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
	if err != nil || len(list.GetObjects()) != 0 {
		t.Errorf("list after delete: %v, %v", objectIDs(list.GetObjects()), err)
	}
	history := func() []*rmspb.FirmwareObjectHistoryRecord {
		resp, err := cs.client.GetFirmwareObjectHistory(rpcContext(t), &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: rel.ID})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetRecords()
	}
	if h := history(); len(h) != 1 || h[0].GetFirmwareAvailable() || h[0].GetRackId() != "rack-1" {
		t.Errorf("history after delete: %v", h)
	}
	// An unknown id is NOT_FOUND, as upstream's status_from_rms_error.
	_, err = cs.client.DeleteFirmwareObject(rpcContext(t), &rmspb.DeleteFirmwareObjectRequest{Id: rel.ID})
	if status.Code(err) != codes.NotFound || status.Convert(err).Message() != `firmware object "DGXGB200_1.3.7" not found` {
		t.Errorf("second delete: %v, want NOT_FOUND", err)
	}
	// The id is free again; the record now finds an object of that id.
	// Another object became the default of the type meanwhile (the first
	// added after the delete): the re-added one does not take the mark
	// back.
	cs.art.SetFault(rel.HMC.Path, artifactsim.Fault{})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: cs.publish(simrelease.Options{Milestone: "1.3.8"}).ConfigJSON, HardwareType: "gb200-nvl"})
	if o := cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl"}); o.GetIsDefault() {
		t.Error("a re-added object inherited the default mark of the deleted one")
	}
	cs.waitAvailable(rel.ID)
	if h := history(); len(h) != 1 || !h[0].GetFirmwareAvailable() {
		t.Errorf("history after the re-add: %v", h)
	}
}

func TestAddFirmwareObject_ChecksumMismatchLeavesTheObjectUnavailable(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	rel := cs.publish(simrelease.Options{})
	cs.art.SetFault(rel.SwitchCPLD.Path, artifactsim.Fault{WrongBytes: true})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	stored := cs.waitFailed(rel.ID)
	for _, want := range []string{"artifact download failed (1 of 6 artifacts): artifact " + rel.SwitchCPLD.Name + " from " + rel.SwitchCPLD.URL,
		"sha256 mismatch: got ", "want " + rel.SwitchCPLD.Sha256, "delete the object and add it again to retry"} {
		if !strings.Contains(stored.UnavailableReason, want) {
			t.Errorf("reason %q lacks %q", stored.UnavailableReason, want)
		}
	}
	for _, a := range stored.Artifacts {
		want := store.ArtifactReady
		if a.Name == rel.SwitchCPLD.Name {
			want = store.ArtifactFailed
		}
		if a.State != want {
			t.Errorf("artifact %s is %s, want %s", a.Name, a.State, want)
		}
	}
	if _, err := os.Stat(filepath.Join(cs.cacheDir(rel.ID), rel.SwitchCPLD.Name)); !os.IsNotExist(err) {
		t.Errorf("the mismatching artifact was kept: %v", err)
	}
	if obj := cs.getObject(rel.ID); obj.GetAvailable() {
		t.Error("available with an artifact that failed")
	}
	// The warning follows the store update waitFailed saw.
	if n := cs.waitLog(`"level":"warn"`, `"firmware object unavailable: artifact download failed"`, rel.ID, "sha256 mismatch"); n != 1 {
		t.Errorf("%d warnings of the failure; logs:\n%s", n, cs.logs)
	}
}

func TestAddFirmwareObject_ArtifactoryLocationsTakeTheAccessToken(t *testing.T) {
	const token = "AKCp8jQ-artifactory-api-key"
	cs := startCatalog(t, catalogOptions{server: artifactsim.Options{Token: hw.NewSecret(token)}})
	tests := []struct {
		name  string
		token *string
		want  string // "" = available
	}{
		{"right token", proto.String(token), ""},
		{"NOAUTH", proto.String("NOAUTH"), "returned HTTP 401 (no access token was sent)"},
		{"no token", nil, "returned HTTP 401 (no access token was sent)"},
		{"wrong token", proto.String("not-the-key"), "returned HTTP 401 (an access token was sent)"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel := cs.publish(simrelease.Options{Milestone: fmt.Sprintf("3.%d", i), LocationType: "Artifactory"})
			cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl", AccessToken: tt.token})
			if tt.want == "" {
				cs.waitAvailable(rel.ID)
				return
			}
			stored := cs.waitFailed(rel.ID)
			if !strings.Contains(stored.UnavailableReason, "(6 of 6 artifacts)") || !strings.Contains(stored.UnavailableReason, tt.want) {
				t.Errorf("reason %q, want every artifact failing with %q", stored.UnavailableReason, tt.want)
			}
		})
	}
	var sent, without int
	for _, r := range cs.art.Requests() {
		if r.TokenSent {
			sent++
		} else {
			without++
		}
	}
	if sent != 12 || without != 12 {
		t.Errorf("%d requests with a token and %d without, want 12 each (6 artifacts × 2 objects)", sent, without)
	}
}

func TestAddFirmwareObject_TheAccessTokenIsNeverStoredOrLogged(t *testing.T) {
	const token = "AKCp8never-store-this-token-7f3a"
	cs := startCatalog(t, catalogOptions{server: artifactsim.Options{Token: hw.NewSecret(token)}})
	good := cs.publish(simrelease.Options{Milestone: "good", LocationType: "Artifactory"})
	bad := cs.publish(simrelease.Options{Milestone: "bad", LocationType: "Artifactory"})
	cs.art.SetFault(bad.HMC.Path, artifactsim.Fault{Status: 500})
	cs.art.SetFault(bad.NVOS.Path, artifactsim.Fault{WrongBytes: true})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: good.ConfigJSON, HardwareType: "gb200-nvl", AccessToken: proto.String(token)})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: bad.ConfigJSON, HardwareType: "gb200-nvl", AccessToken: proto.String(token)})
	// A refused request must not echo it either.
	_, err := cs.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{ConfigJson: good.ConfigJSON, AccessToken: proto.String(token + "\r\n")})
	if status.Code(err) != codes.InvalidArgument || strings.Contains(err.Error(), token) {
		t.Errorf("token with a line break: %v", err)
	}
	cs.waitAvailable(good.ID)
	cs.waitFailed(bad.ID)
	cs.restart() // the database files are complete on disk
	if b := cs.sqliteFiles(); len(b) == 0 || strings.Contains(string(b), token) {
		t.Errorf("the SQLite files (%d bytes) hold the token", len(b))
	}
	stored, err := cs.store.ListFirmwareObjects(rpcContext(t), store.ObjectFilter{})
	if err != nil || len(stored) != 2 {
		t.Fatalf("%d objects, %v", len(stored), err)
	}
	if s := fmt.Sprintf("%+v", stored); strings.Contains(s, token) {
		t.Errorf("a stored object holds the token: %s", s)
	}
	logs := cs.logs.String()
	if !strings.Contains(logs, "firmware object unavailable") || !strings.Contains(logs, `"token":true`) {
		t.Fatalf("the logs do not cover the downloads:\n%s", logs)
	}
	if strings.Contains(logs, token) {
		t.Errorf("the logs hold the token:\n%s", logs)
	}
}

func TestAddFirmwareObject_AnExistingIDIsAlreadyExists(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	rel := cs.publish(simrelease.Options{})
	first := cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	cs.waitAvailable(rel.ID)
	requests := len(cs.art.Requests())
	// The same id with another hardware type, another manifest text and
	// set_default: refused, and nothing changes.
	again := strings.Replace(rel.ConfigJSON, `"State": "Released"`, `"State": "Beta"`, 1)
	_, err := cs.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{ConfigJson: again, HardwareType: "any", SetDefault: true})
	if status.Code(err) != codes.AlreadyExists ||
		status.Convert(err).Message() != `firmware object "DGXGB200_1.3.7" already exists; delete it first to add it again` {
		t.Fatalf("re-add: %v", err)
	}
	got := cs.getObject(rel.ID)
	if got.GetConfigJson() != rel.ConfigJSON || got.GetHardwareType() != "gb200-nvl" || got.GetIsDefault() != first.GetIsDefault() ||
		!got.GetCreated().AsTime().Equal(first.GetCreated().AsTime()) {
		t.Errorf("the stored object changed: %v", got)
	}
	if n := len(cs.art.Requests()); n != requests {
		t.Errorf("a refused re-add downloaded %d artifacts", n-requests)
	}
}

func TestFirmwareCatalog_ARestartKeepsObjectsAndDefaultsAndSettlesInterruptedDownloads(t *testing.T) {
	// Two held transfers from the one artifact server would take both of
	// the default two slots per host and keep the other ten artifacts
	// waiting: allow four, so two stay free for them.
	cs := startCatalog(t, catalogOptions{perHost: 4})
	done := cs.publish(simrelease.Options{Milestone: "done"})
	landed := cs.publish(simrelease.Options{Milestone: "landed"})
	cut := cs.publish(simrelease.Options{Milestone: "cut"})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: done.ConfigJSON, HardwareType: "gb200-nvl", SetDefault: true})
	cs.waitAvailable(done.ID)
	cs.art.SetFault(landed.PowerShelf.Path, artifactsim.Fault{Hold: true})
	cs.art.SetFault(cut.PowerShelf.Path, artifactsim.Fault{Hold: true})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: landed.ConfigJSON, HardwareType: "gb300-nvl", SetDefault: true})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: cut.ConfigJSON, HardwareType: "any"})
	if err := cs.art.WaitHeld(rpcContext(t), 2); err != nil {
		t.Fatal(err)
	}
	cs.waitReady(landed.ID, 5)
	cs.waitReady(cut.ID, 5)
	before, err := cs.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
	if err != nil {
		t.Fatal(err)
	}

	cs.stop() // the two held downloads are cut short
	// One object's last package had landed just before the stop.
	cs.art.SetFault(landed.PowerShelf.Path, artifactsim.Fault{})
	body := fetchArtifact(t, landed.PowerShelf.URL)
	if err := os.WriteFile(filepath.Join(cs.cacheDir(landed.ID), landed.PowerShelf.Name), body, 0o600); err != nil {
		t.Fatal(err)
	}
	cs.start()

	cs.waitAvailable(landed.ID)
	stored := cs.waitFailed(cut.ID)
	if !strings.Contains(stored.UnavailableReason, "interrupted by a restart of rmsd before "+cut.PowerShelf.Name) ||
		!strings.Contains(stored.UnavailableReason, "delete the object and add it again") {
		t.Errorf("reason %q", stored.UnavailableReason)
	}
	after, err := cs.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objectIDs(after.GetObjects()), objectIDs(before.GetObjects()); !slices.Equal(got, want) {
		t.Fatalf("objects after the restart %v, before %v", got, want)
	}
	for i, o := range after.GetObjects() {
		b := before.GetObjects()[i]
		if o.GetConfigJson() != b.GetConfigJson() || o.GetHardwareType() != b.GetHardwareType() || o.GetIsDefault() != b.GetIsDefault() ||
			!o.GetCreated().AsTime().Equal(b.GetCreated().AsTime()) || !proto.Equal(o.GetMetadata(), b.GetMetadata()) {
			t.Errorf("%s changed over the restart:\n%v\nwas\n%v", o.GetId(), o, b)
		}
		if o.GetAvailable() != (o.GetId() != cut.ID) {
			t.Errorf("%s available %v after the restart", o.GetId(), o.GetAvailable())
		}
	}
	if !cs.getObject(done.ID).GetIsDefault() || !cs.getObject(landed.ID).GetIsDefault() {
		t.Error("defaults lost over the restart")
	}
	// The interrupted object is deleted and added again, as the reason says.
	cs.art.SetFault(cut.PowerShelf.Path, artifactsim.Fault{})
	if resp, err := cs.client.DeleteFirmwareObject(rpcContext(t), &rmspb.DeleteFirmwareObjectRequest{Id: cut.ID}); err != nil ||
		resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("delete: %v, %v", resp, err)
	}
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: cut.ConfigJSON, HardwareType: "any"})
	cs.waitAvailable(cut.ID)
}

func TestAddFirmwareObject_AManifestRefusedIsInvalidArgument(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	rel := cs.publish(simrelease.Options{})
	tests := []struct {
		name string
		give string
		want string
	}{
		{"empty", "", "config_json: is empty; want a firmware manifest (a JSON object)"},
		{"an array", "[]", "config_json: must be a JSON object, got an array"},
		{"not JSON", `{"ProductName": `, "config_json: is not valid JSON"},
		{"two milestones", `{"ProductName": "DGXGB200", "Milestones": [{}, {}]}`, "config_json: Milestones must contain exactly one milestone, got 2"},
		{"an s3 location", strings.Replace(rel.ConfigJSON, rel.HMC.URL, "s3://firmware/hmc.fwpkg", 1), "s3 sources are not supported"},
		{"a package without its digest", strings.Replace(rel.ConfigJSON, `"Sha256":"`+rel.ComputeBMC.Sha256+`"`, `"Sha256":null`, 1),
			"has no Sha256; rmsd downloads only artifacts it can verify"},
		{"a file outside firmware_dir", strings.Replace(rel.ConfigJSON, `"Location":"`+rel.HMC.URL+`","LocationType":"HTTPS"`,
			`"Location":"/etc/passwd.fwpkg","LocationType":"file"`, 1), "config_json: an artifact cannot be fetched"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cs.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{ConfigJson: tt.give, HardwareType: "gb200-nvl"})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tt.want) {
				t.Errorf("got %v, want INVALID_ARGUMENT with %q", err, tt.want)
			}
		})
	}
	list, err := cs.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
	if err != nil || len(list.GetObjects()) != 0 || len(cs.art.Requests()) != 0 {
		t.Errorf("refused manifests left objects %v or requests %v (%v)", objectIDs(list.GetObjects()), cs.art.Requests(), err)
	}
}

func TestFirmwareCatalog_RequestBoundsAndMissingIDs(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	long := strings.Repeat("x", maxIDLength+1)
	ctx := rpcContext(t)
	calls := []struct {
		name string
		call func() error
		code codes.Code
		want string
	}{
		{"get, id too long", func() error {
			_, err := cs.client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: long})
			return err
		}, codes.InvalidArgument, "id is 257 characters long; ids are limited to 256 characters"},
		{"get, no id", func() error {
			_, err := cs.client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{})
			return err
		}, codes.InvalidArgument, "id is required"},
		{"get, unknown id", func() error {
			_, err := cs.client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: "DGXGB200_0.0"})
			return err
		}, codes.NotFound, `firmware object "DGXGB200_0.0" not found`},
		{"set default, no id", func() error {
			_, err := cs.client.SetDefaultFirmwareObject(ctx, &rmspb.SetDefaultFirmwareObjectRequest{})
			return err
		}, codes.InvalidArgument, "object_id is required"},
		{"set default, id too long", func() error {
			_, err := cs.client.SetDefaultFirmwareObject(ctx, &rmspb.SetDefaultFirmwareObjectRequest{ObjectId: long})
			return err
		}, codes.InvalidArgument, "object_id is 257 characters long"},
		{"delete, id too long", func() error {
			_, err := cs.client.DeleteFirmwareObject(ctx, &rmspb.DeleteFirmwareObjectRequest{Id: long})
			return err
		}, codes.InvalidArgument, "id is 257 characters long"},
		{"add, hardware type too long", func() error {
			_, err := cs.client.AddFirmwareObject(ctx, &rmspb.AddFirmwareObjectRequest{ConfigJson: "{}", HardwareType: long})
			return err
		}, codes.InvalidArgument, "hardware_type is 257 characters long"},
		{"add, manifest too large", func() error {
			_, err := cs.client.AddFirmwareObject(ctx, &rmspb.AddFirmwareObjectRequest{ConfigJson: strings.Repeat(" ", maxConfigJSON+1)})
			return err
		}, codes.InvalidArgument, "config_json is 1048577 bytes; at most 1048576 are accepted"},
		{"list, hardware type too long", func() error {
			_, err := cs.client.ListFirmwareObjects(ctx, &rmspb.ListFirmwareObjectsRequest{HardwareType: long})
			return err
		}, codes.InvalidArgument, "hardware_type is 257 characters long"},
		{"history, object id too long", func() error {
			_, err := cs.client.GetFirmwareObjectHistory(ctx, &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: long})
			return err
		}, codes.InvalidArgument, "object_id is 257 characters long"},
		{"history, rack id too long", func() error {
			_, err := cs.client.GetFirmwareObjectHistory(ctx, &rmspb.GetFirmwareObjectHistoryRequest{RackIds: []string{"rack-1", long}})
			return err
		}, codes.InvalidArgument, "rack_ids[1] is 257 characters long"},
		{"history, too many racks", func() error {
			racks := make([]string, maxHistoryRacks+1)
			for i := range racks {
				racks[i] = fmt.Sprintf("rack-%d", i)
			}
			_, err := cs.client.GetFirmwareObjectHistory(ctx, &rmspb.GetFirmwareObjectHistoryRequest{RackIds: racks})
			return err
		}, codes.InvalidArgument, "rack_ids lists 1001 racks; at most 1000 are accepted"},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if status.Code(err) != tt.code || !strings.Contains(status.Convert(err).Message(), tt.want) {
				t.Errorf("got %v, want %v with %q", err, tt.code, tt.want)
			}
		})
	}
	// As upstream's handle_delete_firmware_object: a gRPC code, not an
	// in-band failure.
	_, err := cs.client.DeleteFirmwareObject(ctx, &rmspb.DeleteFirmwareObjectRequest{})
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "id is required" {
		t.Errorf("delete without an id: %v, want INVALID_ARGUMENT", err)
	}
}

func TestGetFirmwareObjectHistory_NewestFirstWithTheCatalogAsItIsNow(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	rel := cs.publish(simrelease.Options{})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	for _, r := range []store.ApplyRecord{
		{ObjectID: rel.ID, RackID: "rack-1", NodeIDs: []string{"c1", "c2"}, FirmwareType: "prod", HardwareType: "gb200-nvl"},
		{ObjectID: "DGXGB200_1.3.6", RackID: "rack-2", NodeIDs: []string{"s1"}, FirmwareType: "dev", HardwareType: "gb200-nvl"},
		{ObjectID: rel.ID, RackID: "rack-2", FirmwareType: "prod", HardwareType: "gb200-nvl"},
	} {
		r.JobID, r.Operation = "job", "ApplyStoredFirmwareObject"
		if _, err := cs.store.RecordApply(rpcContext(t), r); err != nil {
			t.Fatal(err)
		}
	}
	describe := func(req *rmspb.GetFirmwareObjectHistoryRequest) []string {
		resp, err := cs.client.GetFirmwareObjectHistory(rpcContext(t), req)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range resp.GetRecords() {
			if r.GetAppliedAt() == nil {
				t.Errorf("record without applied_at: %v", r)
			}
			out = append(out, fmt.Sprintf("%s %s %s %s %v %v", r.GetObjectId(), r.GetRackId(), r.GetFirmwareType(), r.GetHardwareType(),
				r.GetNodeIds(), r.GetFirmwareAvailable()))
		}
		return out
	}
	tests := []struct {
		give *rmspb.GetFirmwareObjectHistoryRequest
		want []string
	}{
		{&rmspb.GetFirmwareObjectHistoryRequest{}, []string{
			"DGXGB200_1.3.7 rack-2 prod gb200-nvl [] true",
			"DGXGB200_1.3.6 rack-2 dev gb200-nvl [s1] false",
			"DGXGB200_1.3.7 rack-1 prod gb200-nvl [c1 c2] true",
		}},
		{&rmspb.GetFirmwareObjectHistoryRequest{ObjectId: rel.ID}, []string{
			"DGXGB200_1.3.7 rack-2 prod gb200-nvl [] true",
			"DGXGB200_1.3.7 rack-1 prod gb200-nvl [c1 c2] true",
		}},
		{&rmspb.GetFirmwareObjectHistoryRequest{RackIds: []string{"rack-2", "rack-9"}}, []string{
			"DGXGB200_1.3.7 rack-2 prod gb200-nvl [] true",
			"DGXGB200_1.3.6 rack-2 dev gb200-nvl [s1] false",
		}},
		{&rmspb.GetFirmwareObjectHistoryRequest{ObjectId: rel.ID, RackIds: []string{"rack-1"}}, []string{
			"DGXGB200_1.3.7 rack-1 prod gb200-nvl [c1 c2] true",
		}},
		{&rmspb.GetFirmwareObjectHistoryRequest{ObjectId: "DGXGB200_0.1"}, []string{}},
	}
	for _, tt := range tests {
		if got := describe(tt.give); !slices.Equal(got, tt.want) {
			t.Errorf("history %v\n got %q\nwant %q", tt.give, got, tt.want)
		}
	}
}

// TestFirmwareCatalog_PostgreSQLEndToEnd runs one whole path on the
// PostgreSQL store: add, download, list, default, restart, delete.
func TestFirmwareCatalog_PostgreSQLEndToEnd(t *testing.T) {
	cs := startCatalog(t, catalogOptions{postgres: true})
	rel := cs.publish(simrelease.Options{})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl", SetDefault: true})
	cs.waitAvailable(rel.ID)
	other := cs.publish(simrelease.Options{Milestone: "1.3.8"})
	cs.art.SetFault(other.HMC.Path, artifactsim.Fault{Status: 404})
	cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: other.ConfigJSON, HardwareType: "gb200-nvl"})
	if stored := cs.waitFailed(other.ID); !strings.Contains(stored.UnavailableReason, "returned HTTP 404") {
		t.Errorf("reason %q", stored.UnavailableReason)
	}
	cs.restart()
	resp, err := cs.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{OnlyAvailable: true, HardwareType: "gb200-nvl"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetObjects(); len(got) != 1 || got[0].GetId() != rel.ID || !got[0].GetIsDefault() || got[0].GetConfigJson() != rel.ConfigJSON {
		t.Errorf("available gb200-nvl objects after a restart: %v", objectIDs(got))
	}
	if _, err := cs.client.SetDefaultFirmwareObject(rpcContext(t), &rmspb.SetDefaultFirmwareObjectRequest{ObjectId: other.ID}); err != nil {
		t.Fatal(err)
	}
	if cs.getObject(rel.ID).GetIsDefault() {
		t.Error("two defaults of one hardware type")
	}
	del, err := cs.client.DeleteFirmwareObject(rpcContext(t), &rmspb.DeleteFirmwareObjectRequest{Id: rel.ID})
	if err != nil || del.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("delete: %v, %v", del, err)
	}
	if _, err := os.Stat(cs.cacheDir(rel.ID)); !os.IsNotExist(err) {
		t.Errorf("cache after delete: %v", err)
	}
}

func TestFirmwareCatalog_WithoutACatalogIsUnavailable(t *testing.T) {
	client := rmspb.NewRackManagerClient(startTestServer(t, Deps{}))
	_, err := client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "firmware catalog is not available") {
		t.Errorf("got %v", err)
	}
}

func fetchArtifact(t *testing.T, url string) []byte {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return b
}
