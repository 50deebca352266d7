package rmsserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/messages"
)

// switchInvRack is a simulated rack behind a server with a firmware_dir
// that reaches the NVOS hosts over NVUE and SSH, as `rmsd --simulate`.
type switchInvRack struct {
	*simRack
	dir  string // firmware_dir
	logs *syncBuffer
}

func startSwitchInvRack(t *testing.T) *switchInvRack {
	t.Helper()
	s := startSimRack(t)
	s.runner = fastRunner(t, s.fleet)
	r := &switchInvRack{simRack: s, dir: t.TempDir(), logs: &syncBuffer{}}
	ts := startServer(t, Options{Logger: zerolog.New(r.logs), Deps: Deps{
		Racks: s.racks, Nodes: s.runner, Jobs: s.engine, FirmwareDir: r.dir}})
	s.client = rmspb.NewRackManagerClient(dial(t, ts.addr, nil))
	return r
}

// nvos returns the simulated NVOS host of switch n.
func (r *switchInvRack) nvos(t *testing.T, n hw.Node) *sim.NVOSHost {
	t.Helper()
	for _, sn := range r.fleet.Nodes() {
		if sn.ID == n.ID {
			return sn.Switch.(*sim.NVOSHost)
		}
	}
	t.Fatalf("no NVOS host for %s", n.ID)
	return nil
}

// writeFirmware writes a file of size bytes, each one b, into firmware_dir.
func (r *switchInvRack) writeFirmware(t *testing.T, name string, size int, b byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), bytes.Repeat([]byte{b}, size), 0o600); err != nil {
		t.Fatal(err)
	}
}

// noSecret fails if any reply mentions a password of the rack's nodes.
func (r *switchInvRack) noSecret(t *testing.T, replies ...proto.Message) {
	t.Helper()
	for _, reply := range replies {
		text := protojson.Format(reply)
		for _, n := range r.nodes {
			for _, ep := range []*hw.Endpoint{n.BMC, n.Host} {
				if ep != nil && !ep.Credentials.Password.IsZero() && strings.Contains(text, ep.Credentials.Password.Reveal()) {
					t.Fatalf("a reply carries the password of %s: %s", n.ID, text)
				}
			}
		}
	}
}

const bmcComponent = rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_BMC

// A component is read with its versions, health and staged files; cpld
// reads CPLD1.
func TestListSwitchFirmware(t *testing.T) {
	r := startSwitchInvRack(t)
	sw := r.ofKind(hw.KindSwitch)[0]
	r.nvos(t, sw).SetFirmware("BMC", "88.0002.1950")
	for _, tc := range []struct {
		component     rmspb.SwitchFirmwareComponentType
		name, nvue    string
		version, dir  string
		updateStatus  string
		stagedPresent bool
	}{
		{bmcComponent, "bmc", "BMC", "88.0002.1950", "/host/fw-images/bmc", "current", false},
		{rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_CPLD, "cpld", "CPLD1", "CPLD000133_REV3100", "/host/fw-images/cpld", "current", false},
	} {
		resp, err := r.client.ListSwitchFirmware(rpcContext(t), &rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, ComponentType: tc.component})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetErrorMessage() != "" {
			t.Fatalf("%s: %v", tc.name, resp)
		}
		var doc switchFirmwareDoc
		if err := json.Unmarshal([]byte(resp.GetResultJson()), &doc); err != nil {
			t.Fatalf("%s: result_json %q: %v", tc.name, resp.GetResultJson(), err)
		}
		want := switchFirmwareDoc{RackID: sw.RackID, NodeID: sw.ID, Component: tc.name, NVUEComponent: tc.nvue, Version: tc.version,
			InstalledVersion: tc.version, UpdateStatus: tc.updateStatus, Health: "Unknown", StagingDir: tc.dir, StagedFiles: []string{}}
		if got, _ := json.Marshal(doc); string(got) != mustJSON(t, want) {
			t.Errorf("%s: result_json %s, want %s", tc.name, got, mustJSON(t, want))
		}
		// NVUE's component document is passed through, as upstream's
		// list_firmware result.
		var nvueDoc struct {
			Actual    string `json:"actual-firmware"`
			Installed string `json:"installed-firmware"`
		}
		if err := json.Unmarshal([]byte(resp.GetResultJson()), &nvueDoc); err != nil || nvueDoc.Actual != tc.version || nvueDoc.Installed != tc.version {
			t.Errorf("%s: result_json %s lacks NVUE's keys: %v", tc.name, resp.GetResultJson(), err)
		}
		r.noSecret(t, resp)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A push places the file in the component's staging directory, and a
// second push of a file of the same size sends nothing: the switch keeps
// the first file's bytes. The staged file is then listed.
func TestPushSwitchFirmware_PushesThenSkipsSameSize(t *testing.T) {
	r := startSwitchInvRack(t)
	sw := r.ofKind(hw.KindSwitch)[1]
	host := r.nvos(t, sw)
	r.writeFirmware(t, "cpld.vme", 4096, 'a')
	req := &rmspb.PushSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, ComponentType: rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_CPLD,
		Filename: "cpld-0.0140.vme", LocalFilePath: "cpld.vme"}
	push := func(wantStatus string) {
		t.Helper()
		resp, err := r.client.PushSwitchFirmware(rpcContext(t), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			t.Fatalf("push: %v", resp)
		}
		want := switchPushDoc{RackID: sw.RackID, NodeID: sw.ID, Component: "cpld", Filename: "cpld-0.0140.vme",
			RemotePath: "/host/fw-images/cpld/cpld-0.0140.vme", SizeBytes: 4096, Status: wantStatus}
		if resp.GetResultJson() != mustJSON(t, want) {
			t.Fatalf("result_json %s, want %s", resp.GetResultJson(), mustJSON(t, want))
		}
		r.noSecret(t, resp)
	}
	push("pushed")
	if data, ok := host.File("/host/fw-images/cpld/cpld-0.0140.vme"); !ok || !bytes.Equal(data, bytes.Repeat([]byte{'a'}, 4096)) {
		t.Fatalf("staged file: %d bytes, present %v", len(data), ok)
	}
	r.writeFirmware(t, "cpld.vme", 4096, 'b') // same size, other bytes
	push("already_present")
	if data, _ := host.File("/host/fw-images/cpld/cpld-0.0140.vme"); !bytes.Equal(data, bytes.Repeat([]byte{'a'}, 4096)) {
		t.Fatal("a file of the same size was sent again")
	}
	r.writeFirmware(t, "cpld.vme", 5000, 'c') // another size: sent
	req.ComponentType = rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_CPLD
	resp, err := r.client.PushSwitchFirmware(rpcContext(t), req)
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || !strings.Contains(resp.GetResultJson(), `"status":"pushed"`) {
		t.Fatalf("push of a new size: %v, %v", resp, err)
	}
	if data, _ := host.File("/host/fw-images/cpld/cpld-0.0140.vme"); len(data) != 5000 {
		t.Fatalf("staged %d bytes, want 5000", len(data))
	}
	list, err := r.client.ListSwitchFirmware(rpcContext(t), &rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID,
		ComponentType: rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_CPLD})
	if err != nil || !strings.Contains(list.GetResultJson(), `"staged_files":["cpld-0.0140.vme"]`) {
		t.Fatalf("listing after the push: %v, %v", list, err)
	}
	if host.Firmware()["CPLD1"] != "CPLD000133_REV3100" {
		t.Fatal("a push installed firmware")
	}
}

// Every refusal is in-band, names its reason, and contacts no switch.
func TestSwitchFirmwareRPCs_RefuseBadRequestsBeforeAnyIO(t *testing.T) {
	r := startSwitchInvRack(t)
	sw := r.ofKind(hw.KindSwitch)[2]
	compute := r.ofKind(hw.KindCompute)[0]
	host := r.nvos(t, sw)
	r.writeFirmware(t, "ok.fwpkg", 2048, 'x')
	r.writeFirmware(t, "small.fwpkg", 1023, 'x')
	if err := os.Mkdir(filepath.Join(r.dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.fwpkg")
	if err := os.WriteFile(outside, bytes.Repeat([]byte{'x'}, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(r.dir, "link.fwpkg")); err != nil {
		t.Fatal(err)
	}
	push := func(mod func(*rmspb.PushSwitchFirmwareRequest)) *rmspb.PushSwitchFirmwareRequest {
		req := &rmspb.PushSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, ComponentType: bmcComponent, Filename: "bmc-1.2.fwpkg", LocalFilePath: "ok.fwpkg"}
		mod(req)
		return req
	}
	pushes := []struct {
		req  *rmspb.PushSwitchFirmwareRequest
		want string
	}{
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.NodeId = "nope" }), "node nope not found in rack"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.RackId = "nope" }), "rack not found: nope"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.NodeId = compute.ID }), "not a switch"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.ComponentType = 0 }), "SWITCH_FIRMWARE_COMPONENT_TYPE_UNSPECIFIED is not a switch firmware component"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.ComponentType = 1 }), "SWITCH_FIRMWARE_COMPONENT_TYPE_UNKNOWN is not"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.ComponentType = 42 }), "component_type 42 is not"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.LocalFilePath = "../outside.fwpkg" }), "is not inside firmware_dir"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.LocalFilePath = outside }), "is not inside firmware_dir"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.LocalFilePath = "link.fwpkg" }), "is not inside firmware_dir"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.LocalFilePath = "" }), "is not inside firmware_dir"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.LocalFilePath = "missing.fwpkg" }), `"missing.fwpkg" not found in firmware_dir`},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.LocalFilePath = "adir" }), "is not a regular file"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.LocalFilePath = "small.fwpkg" }), "is 1023 bytes; a firmware file is at least 1024"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.Filename = "" }), `file name "" on the switch`},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.Filename = ".hidden" }), `file name ".hidden" on the switch`},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.Filename = "a/b.fwpkg" }), "only [A-Za-z0-9._-]"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.Filename = "a b.fwpkg" }), "only [A-Za-z0-9._-]"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.Filename = "x';reboot'" }), "only [A-Za-z0-9._-]"},
		{push(func(q *rmspb.PushSwitchFirmwareRequest) { q.Filename = strings.Repeat("a", 256) }), "at most 255 characters"},
	}
	before := host.NVUERequests()
	for _, tc := range pushes {
		resp, err := r.client.PushSwitchFirmware(rpcContext(t), tc.req)
		if err != nil {
			t.Fatalf("%v: %v", tc.req, err)
		}
		if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetResultJson() != "" || !strings.Contains(resp.GetErrorMessage(), tc.want) {
			t.Errorf("%v: %v, want FAILURE with %q", tc.req, resp, tc.want)
		}
		r.noSecret(t, resp)
	}
	lists := []struct {
		req  *rmspb.ListSwitchFirmwareRequest
		want string
	}{
		{&rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: "nope", ComponentType: bmcComponent}, "node nope not found"},
		{&rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: compute.ID, ComponentType: bmcComponent}, "not a switch"},
		{&rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID}, "UNSPECIFIED is not a switch firmware component"},
		{&rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, ComponentType: 99}, "component_type 99 is not"},
	}
	for _, tc := range lists {
		resp, err := r.client.ListSwitchFirmware(rpcContext(t), tc.req)
		if err != nil {
			t.Fatalf("%v: %v", tc.req, err)
		}
		if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetResultJson() != "" || !strings.Contains(resp.GetErrorMessage(), tc.want) {
			t.Errorf("%v: %v, want FAILURE with %q", tc.req, resp, tc.want)
		}
	}
	img, err := r.client.ListSwitchSystemImages(rpcContext(t), &rmspb.ListSwitchSystemImagesRequest{RackId: sw.RackID, NodeId: compute.ID})
	if err != nil || img.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(img.GetErrorMessage(), "not a switch") {
		t.Errorf("images of a compute tray: %v, %v", img, err)
	}
	if got := host.NVUERequests() - before; got != 0 {
		t.Fatalf("refused requests sent %d NVUE requests", got)
	}
	if _, ok := host.File("/host/fw-images/bmc/bmc-1.2.fwpkg"); ok {
		t.Fatal("a refused push staged a file")
	}
}

// A switch a job holds is not pushed to (in-band "in progress"); it can
// still be read.
func TestPushSwitchFirmware_RefusedOnAHeldSwitch(t *testing.T) {
	r := startSwitchInvRack(t)
	sw := r.ofKind(hw.KindSwitch)[3]
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	job, err := r.engine.Create(rpcContext(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: sw.RackID, NodeID: sw.ID},
		messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			_ = job.Complete("Completed", "")
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.writeFirmware(t, "bmc.fwpkg", 2048, 'x')
	resp, err := r.client.PushSwitchFirmware(rpcContext(t), &rmspb.PushSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID,
		ComponentType: bmcComponent, Filename: "bmc-2.0.fwpkg", LocalFilePath: "bmc.fwpkg"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(resp.GetErrorMessage(), "in progress") ||
		!strings.Contains(resp.GetErrorMessage(), job.ID) {
		t.Fatalf("push to a held switch: %v", resp)
	}
	t.Logf("held: %s", resp.GetErrorMessage())
	if _, ok := r.nvos(t, sw).File("/host/fw-images/bmc/bmc-2.0.fwpkg"); ok {
		t.Fatal("a refused push staged a file")
	}
	list, err := r.client.ListSwitchFirmware(rpcContext(t), &rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, ComponentType: bmcComponent})
	if err != nil || list.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("listing a held switch: %v, %v", list, err)
	}
}

// A switch that does not answer fails each RPC in-band, saying what
// could not be reached; no password is in the replies.
func TestSwitchRPCs_UnreachableSwitchFailsInBand(t *testing.T) {
	r := startSwitchInvRack(t)
	sw := r.ofKind(hw.KindSwitch)[4]
	r.nvos(t, sw).PowerOff()
	r.writeFirmware(t, "bmc.fwpkg", 2048, 'x')
	list, err := r.client.ListSwitchFirmware(rpcContext(t), &rmspb.ListSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, ComponentType: bmcComponent})
	if err != nil {
		t.Fatal(err)
	}
	push, err := r.client.PushSwitchFirmware(rpcContext(t), &rmspb.PushSwitchFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID,
		ComponentType: bmcComponent, Filename: "bmc-2.0.fwpkg", LocalFilePath: "bmc.fwpkg"})
	if err != nil {
		t.Fatal(err)
	}
	img, err := r.client.ListSwitchSystemImages(rpcContext(t), &rmspb.ListSwitchSystemImagesRequest{RackId: sw.RackID, NodeId: sw.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		status rmspb.ReturnCode
		msg    string
		want   string
	}{
		{"ListSwitchFirmware", list.GetStatus(), list.GetErrorMessage(), "read firmware bmc"},
		{"PushSwitchFirmware", push.GetStatus(), push.GetErrorMessage(), "ssh"},
		{"ListSwitchSystemImages", img.GetStatus(), img.GetErrorMessage(), "read system image"},
	} {
		if c.status != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(c.msg, c.want) || !strings.Contains(c.msg, sw.ID) {
			t.Errorf("%s on an unreachable switch: %v %q, want FAILURE naming %s and %q", c.name, c.status, c.msg, sw.ID, c.want)
		}
		t.Logf("%s: %s", c.name, c.msg)
	}
	r.noSecret(t, list, push, img)
}

// images_json is NVUE's listing of the staged files, an object keyed by
// file name as upstream passes it through, each file with the build id it
// installs beside NVUE's keys.
func TestListSwitchSystemImages(t *testing.T) {
	r := startSwitchInvRack(t)
	sw := r.ofKind(hw.KindSwitch)[5]
	c, err := sshsftp.Dial(rpcContext(t), *sw.Host, sshsftp.Options{Port: r.fleet.SSHPort(), HostKey: sshsftp.AcceptAnyHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Upload(rpcContext(t), bytes.NewReader(make([]byte, 2048)), "/host/nos-images/nvos-amd64-25.02.3000.bin", 2048); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upload(rpcContext(t), bytes.NewReader(make([]byte, 2048)), "/host/nos-images/notes.txt", 2048); err != nil {
		t.Fatal(err)
	}
	resp, err := r.client.ListSwitchSystemImages(rpcContext(t), &rmspb.ListSwitchSystemImagesRequest{RackId: sw.RackID, NodeId: sw.ID})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"notes.txt":{"build_id":"","path":"/host/nos-images/notes.txt","size":2048},` +
		`"nvos-amd64-25.02.3000.bin":{"build_id":"nvos-25.02.3000","path":"/host/nos-images/nvos-amd64-25.02.3000.bin","size":2048}}`
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetImagesJson() != want || resp.GetErrorMessage() != "" {
		t.Fatalf("got %v\nwant images_json %s", resp, want)
	}
	r.noSecret(t, resp)
}

// update_status compares the running and the installed version.
func TestSwitchFirmwareUpdateStatus(t *testing.T) {
	for _, c := range []struct {
		version, installed, want string
	}{
		{"1.0", "1.0", "current"},
		{"1.0", "", "current"},
		{"1.0", "1.1", "pending_activation"},
		{"N/A", "1.1", "pending_activation"},
		{"N/A", "", "unknown"},
	} {
		if got := updateStatus(platform.SwitchFirmwareStatus{Version: c.version, Installed: c.installed}); got != c.want {
			t.Errorf("version %q installed %q: %q, want %q", c.version, c.installed, got, c.want)
		}
	}
}
