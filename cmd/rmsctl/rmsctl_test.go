package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// rack is the simulated rack's id.
const rack = "rack-001"

func TestVersionRacksAndNodeList(t *testing.T) {
	out := ok(t, "version")
	if !strings.Contains(out, "rmsctl ") || !strings.Contains(out, "rmsd ") || !strings.Contains(out, daemonAddr) {
		t.Errorf("version printed %q, want both versions and the target", out)
	}
	v := jsonReply(t, ok(t, "-o", "json", "version"), func() *rmspb.GetVersionResponse { return &rmspb.GetVersionResponse{} })
	if v.GetVersion() == "" {
		t.Error("-o json version: empty version")
	}

	if out := ok(t, "racks", "list"); strings.TrimSpace(out) != rack {
		t.Errorf("racks list = %q, want %s", out, rack)
	}
	racks := jsonReply(t, ok(t, "racks", "list", "-o", "json"), func() *rmspb.ListRacksResponse { return &rmspb.ListRacksResponse{} })
	if len(racks.GetRackIds()) != 1 || racks.GetRackIds()[0] != rack {
		t.Errorf("-o json racks list = %v", racks)
	}

	list := ok(t, "nodes", "list", "--rack", rack)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 36 || !strings.HasPrefix(lines[0], "RACK") || !strings.Contains(list, "rack-001-compute-01") || !strings.Contains(list, "COMPUTE_GB200_NVIDIA") {
		t.Errorf("nodes list: %d lines, want a header and 35 nodes:\n%s", len(lines), list)
	}
	inv := jsonReply(t, ok(t, "-o", "json", "nodes", "list"), func() *rmspb.ListNodeInventoryResponse { return &rmspb.ListNodeInventoryResponse{} })
	if len(inv.GetNodes()) != 35 {
		t.Errorf("-o json nodes list: %d nodes, want 35", len(inv.GetNodes()))
	}
	unknown := rmsctl(t, "nodes", "list", "--rack", "no-such-rack")
	if unknown.code != 4 || !strings.Contains(unknown.stderr, "rack no-such-rack is unknown") || unknown.stdout != "" {
		t.Errorf("nodes list of an unknown rack: exit %d, stdout %q, stderr %q; want exit 4 saying the rack is unknown", unknown.code, unknown.stdout, unknown.stderr)
	}
}

// TestInBandFailuresPrintTheirReason: replies without a message field
// (GetPowerState, SetPowerState) print the reason rmsd sends in its
// trailer, in the table and on stderr, for the typed commands and call.
func TestInBandFailuresPrintTheirReason(t *testing.T) {
	const missing = "rack-001-compute-99"
	reason := "node " + missing + " not found in rack " + rack
	get := rmsctl(t, "power", "get", "--rack", rack, missing)
	if get.code != 1 || !strings.Contains(get.stdout, "FAILURE: "+reason) || !strings.Contains(get.stderr, "GetPowerState "+missing+": FAILURE: "+reason) {
		t.Errorf("power get of an unknown node: exit %d, stdout %q, stderr %q; want exit 1 with the reason %q", get.code, get.stdout, get.stderr, reason)
	}
	set := rmsctl(t, "power", "set", "--rack", rack, "--state", "on", missing)
	if set.code != 1 || !strings.Contains(set.stderr, "SetPowerState "+missing+": FAILURE: "+reason) || strings.Contains(set.stderr, "rmsd's log") {
		t.Errorf("power set of an unknown node: exit %d, stderr %q; want exit 1 with the reason %q", set.code, set.stderr, reason)
	}
	called := rmsctl(t, "call", "SetPowerState", "-d", `{"rack_id":"`+rack+`","node_id":"`+missing+`","operation":"POWER_OPERATION_ON"}`)
	if called.code != 1 || !strings.Contains(called.stderr, "SetPowerState: FAILURE: "+reason) {
		t.Errorf("call SetPowerState of an unknown node: exit %d, stderr %q; want exit 1 with the reason %q", called.code, called.stderr, reason)
	}
}

func TestNodesDeleteCreateUpdate(t *testing.T) {
	const node = "rack-001-compute-18"
	var info *rmspb.NodeInfo
	for _, n := range simulatedNodes(t).GetNodes() {
		if n.GetNodeId() == node {
			info = n
		}
	}
	if info == nil {
		t.Fatalf("%s not in the nodes file", node)
	}

	deleted := jsonReply(t, ok(t, "-o", "json", "nodes", "delete", "--rack", rack, node), func() *rmspb.DeleteNodeResponse { return &rmspb.DeleteNodeResponse{} })
	if deleted.GetResponse().GetMessage() != "node "+node+" removed" {
		t.Errorf("nodes delete: %v", deleted)
	}
	if out := ok(t, "nodes", "list", "--rack", rack); strings.Contains(out, node) {
		t.Errorf("%s still listed after its deletion", node)
	}
	again := rmsctl(t, "nodes", "delete", "--rack", rack, node)
	if again.code != 1 || !strings.Contains(again.stderr, "not found") || !strings.Contains(again.stdout, "FAILURE") {
		t.Errorf("deleting %s twice: exit %d, stdout %q, stderr %q; want exit 1 naming it not found", node, again.code, again.stdout, again.stderr)
	}

	created := jsonReply(t, ok(t, "-o", "json", "nodes", "create", "-f", writeProtoJSON(t, &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{info}})),
		func() *rmspb.CreateNodesResponse { return &rmspb.CreateNodesResponse{} })
	if created.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || created.GetStats().GetSuccessfulNodes() != 1 {
		t.Errorf("nodes create: %v", created)
	}
	if out := ok(t, "nodes", "list", "--rack", rack); !strings.Contains(out, node) {
		t.Errorf("%s not listed after nodes create", node)
	}

	if out := ok(t, "nodes", "update", "-f", writeProtoJSON(t, info)); !strings.HasPrefix(out, "SUCCESS") {
		t.Errorf("nodes update printed %q", out)
	}
	// The node still answers through its (re-registered) BMC.
	if out := ok(t, "power", "get", "--rack", rack, node); !strings.Contains(out, "ON") {
		t.Errorf("power get after the update: %q", out)
	}

	noID := proto.Clone(info).(*rmspb.NodeInfo)
	noID.NodeId = ""
	bad := rmsctl(t, "nodes", "update", "-f", writeProtoJSON(t, noID))
	if bad.code != 2 || !strings.Contains(bad.stderr, "node_id") {
		t.Errorf("nodes update without node_id: exit %d, stderr %q; want 2 naming node_id", bad.code, bad.stderr)
	}
	// The credentials of the file never reach the output.
	password := info.GetBmcEndpoint().GetCredentials().GetUserPass().GetPassword()
	if password == "" {
		t.Fatal("the simulated node has no BMC password")
	}
	for _, out := range []string{again.stdout, again.stderr, bad.stdout, bad.stderr} {
		if strings.Contains(out, password) {
			t.Error("a BMC password was printed")
		}
	}
}

func TestPowerGetAndSet(t *testing.T) {
	out := ok(t, "power", "get", "--rack", rack, "rack-001-compute-01", "rack-001-switch-02")
	if strings.Count(out, " ON ") != 2 {
		t.Errorf("power get of two powered nodes:\n%s", out)
	}
	states := jsonLines(t, ok(t, "-o", "json", "power", "get", "--rack", rack, "rack-001-compute-01", "rack-001-powershelf-08"),
		func() *rmspb.GetPowerStateResponse { return &rmspb.GetPowerStateResponse{} })
	if len(states) != 2 || states[1].GetNodeId() != "rack-001-powershelf-08" || states[1].GetPstate() != "ON" {
		t.Errorf("-o json power get: %v", states)
	}

	nodesFile := filepath.Join(daemonDir, "simulated-nodes.json")
	batch := jsonReply(t, ok(t, "-o", "json", "power", "get", "-f", nodesFile),
		func() *rmspb.BatchGetPowerStateResponse { return &rmspb.BatchGetPowerStateResponse{} })
	if len(batch.GetNodePowerStates()) != 35 || batch.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Errorf("power get -f of the whole rack: %d states, %v", len(batch.GetNodePowerStates()), batch.GetResponse().GetMessage())
	}

	if out := ok(t, "power", "set", "--rack", rack, "--state", "on", "rack-001-compute-02"); !strings.Contains(out, "rack-001-compute-02 on: SUCCESS") {
		t.Errorf("power set on: %q", out)
	}
	set := jsonReply(t, ok(t, "-o", "json", "power", "set", "-f", nodesFile, "--state", "on", "rack-001-compute-03"),
		func() *rmspb.BatchSetPowerStateResponse { return &rmspb.BatchSetPowerStateResponse{} })
	if set.GetResponse().GetStats().GetSuccessfulNodes() != 1 {
		t.Errorf("power set -f: %v", set.GetResponse())
	}

	bad := rmsctl(t, "power", "set", "--rack", rack, "--state", "sideways", "rack-001-compute-02")
	if bad.code != 2 || !strings.Contains(bad.stderr, `--state "sideways"`) || !strings.Contains(bad.stderr, "power-cycle") {
		t.Errorf("an unknown state: exit %d, %q; want 2 listing the states", bad.code, bad.stderr)
	}
	unknown := rmsctl(t, "power", "get", "--rack", rack, "rack-001-compute-99")
	if unknown.code != 1 || !strings.Contains(unknown.stderr, "rack-001-compute-99") || !strings.Contains(unknown.stdout, "FAILURE") {
		t.Errorf("power get of an unknown node: exit %d, %q %q; want 1", unknown.code, unknown.stdout, unknown.stderr)
	}
}

func TestDeviceInfo(t *testing.T) {
	out := ok(t, "device-info", "get", "--rack", rack, "rack-001-compute-01", "rack-001-switch-01")
	if !strings.Contains(out, "rack-001-compute-01") || !strings.Contains(out, "rack-001-switch-01") || strings.Count(out, "SUCCESS") != 2 {
		t.Errorf("device-info get:\n%s", out)
	}
	got := jsonLines(t, ok(t, "-o", "json", "device-info", "get", "--rack", rack, "rack-001-compute-02", "rack-001-powershelf-01"),
		func() *rmspb.GetNodeDeviceInfoResponse { return &rmspb.GetNodeDeviceInfoResponse{} })
	if len(got) != 2 || got[0].GetDeviceInfo().GetNodeId() != "rack-001-compute-02" || got[0].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Errorf("-o json device-info get: %v", got)
	}
	list := jsonReply(t, ok(t, "-o", "json", "device-info", "list", "--rack", rack, "--type", "compute-gb200-nvidia"),
		func() *rmspb.ListNodeDeviceInfoByNodeTypeResponse {
			return &rmspb.ListNodeDeviceInfoByNodeTypeResponse{}
		})
	if len(list.GetNodeDeviceDetails()) != 18 || list.GetNodeDeviceDetails()[0].SlotNumber == nil {
		t.Errorf("device-info list of the compute trays: %d entries, %v", len(list.GetNodeDeviceDetails()), list.GetMessage())
	}
	bad := rmsctl(t, "device-info", "list", "--rack", rack, "--type", "toaster")
	if bad.code != 2 || !strings.Contains(bad.stderr, "COMPUTE_GB200_NVIDIA") {
		t.Errorf("an unknown node type: exit %d, %q", bad.code, bad.stderr)
	}
}

func TestFirmwareInventory(t *testing.T) {
	out := ok(t, "firmware", "inventory", "--rack", rack, "rack-001-compute-01")
	if !strings.Contains(out, "FW_BMC_0") {
		t.Errorf("firmware inventory of a compute tray:\n%s", out)
	}
	inv := jsonReply(t, ok(t, "-o", "json", "firmware", "inventory", "--rack", rack),
		func() *rmspb.GetRackFirmwareInventoryResponse { return &rmspb.GetRackFirmwareInventoryResponse{} })
	if len(inv.GetNodes()) < 34 { // every node answers; power shelves list their own
		t.Errorf("rack firmware inventory: %d nodes", len(inv.GetNodes()))
	}
}

func TestSwitchImages(t *testing.T) {
	const image = "nvos-amd64-25.11.1042.bin"
	if err := os.MkdirAll(filepath.Join(daemonDir, "firmware"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(daemonDir, "firmware", image), []byte(strings.Repeat("N", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := ok(t, "switch", "images", "apply", "--rack", rack, "--image", image, "rack-001-switch-09", "--watch", "--interval", "100ms")
	if !strings.Contains(out, "rack-001/rack-001-switch-09") || !strings.Contains(out, "Completed: All 1 switch system image updates completed successfully") {
		t.Errorf("switch images apply --watch:\n%s", out)
	}
	// One line per change, not per poll: the job took many polls.
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, rest, ok := strings.Cut(line, " "); ok && (strings.HasPrefix(rest, "job ") || strings.HasPrefix(rest, "child ")) {
			if seen[rest] {
				t.Errorf("the same state printed twice: %s", rest)
			}
			seen[rest] = true
		}
	}
	if len(seen) < 3 {
		t.Errorf("watch printed %d state lines, want the parent's and the child's changes:\n%s", len(seen), out)
	}
	list := ok(t, "switch", "images", "list", "--rack", rack, "rack-001-switch-09")
	if !strings.Contains(list, "nvos-25.11.1042") || !strings.Contains(list, image) {
		t.Errorf("switch images list:\n%s", list)
	}
	images := jsonReply(t, ok(t, "-o", "json", "switch", "images", "list", "--rack", rack, "rack-001-switch-09"),
		func() *rmspb.ListSwitchSystemImagesResponse { return &rmspb.ListSwitchSystemImagesResponse{} })
	if !strings.Contains(images.GetImagesJson(), `"`+image+`":{`) {
		t.Errorf("-o json switch images list: %v", images)
	}
	notSwitch := rmsctl(t, "switch", "images", "list", "--rack", rack, "rack-001-compute-01")
	if notSwitch.code != 1 || notSwitch.stderr == "" {
		t.Errorf("switch images list of a compute tray: exit %d, %q", notSwitch.code, notSwitch.stderr)
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	down := rmsctlAt(t, "127.0.0.1:1", "--timeout", "5s", "racks", "list")
	if down.code != 3 || !strings.Contains(down.stderr, "unreachable") || !strings.Contains(down.stderr, "127.0.0.1:1") {
		t.Errorf("a bad address: exit %d, %q; want 3 naming the address", down.code, down.stderr)
	}
	for _, args := range [][]string{{"jobs", "get", "no-such-job"}, {"jobs", "watch", "no-such-job"}, {"jobs", "children", "no-such-job"}} {
		r := rmsctl(t, args...)
		if r.code != 4 || !strings.Contains(r.stderr, "job no-such-job not found") {
			t.Errorf("%v: exit %d, %q; want 4 and the job not found", args, r.code, r.stderr)
		}
	}
	for _, args := range [][]string{{"rack", "list"}, {"racks", "list", "--bogus"}, {"-o", "yaml", "racks", "list"}, {"jobs", "watch"}, {"nodes", "create"}} {
		if r := rmsctl(t, args...); r.code != 2 || !strings.HasPrefix(r.stderr, "rmsctl: ") {
			t.Errorf("%v: exit %d, %q; want a usage error (2)", args, r.code, r.stderr)
		}
	}
	if r := rmsctl(t, "firmware", "objects", "get", ""); r.code != 5 || !strings.Contains(r.stderr, "InvalidArgument") {
		t.Errorf("an empty object id: exit %d, %q; want 5 (refused)", r.code, r.stderr)
	}
}

func TestConfigFile(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "rmsctl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "rmsctl", "config.toml"), []byte("addr = \""+daemonAddr+"\"\ntimeout = \"20s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result {
		t.Helper()
		cmd := exec.Command(rmsctlBinary, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+home)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{stdout.String(), stderr.String(), code}
	}
	if r := run("racks", "list"); r.code != 0 || strings.TrimSpace(r.stdout) != rack {
		t.Errorf("racks list with the address from the config file: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := run("--addr", "127.0.0.1:1", "--timeout", "3s", "racks", "list"); r.code != 3 {
		t.Errorf("--addr must win over the config file: exit %d, %q", r.code, r.stderr)
	}
	badKey := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(badKey, []byte("adress = \"x:1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run("--config", badKey, "racks", "list"); r.code != 2 || !strings.Contains(r.stderr, "adress") {
		t.Errorf("a misspelt config key: exit %d, %q; want 2 naming it", r.code, r.stderr)
	}
	if r := run("--config", filepath.Join(home, "missing.toml"), "racks", "list"); r.code != 2 || !strings.Contains(r.stderr, "missing.toml") {
		t.Errorf("a missing --config file: exit %d, %q; want 2", r.code, r.stderr)
	}
}
