package rmsserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/racks"
)

func TestClip(t *testing.T) {
	tests := []struct {
		give string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly-10", 10, "exactly-10"},
		{"eleven-long", 10, "eleven-…"},
		{strings.Repeat("€", 4), 10, "€€…"}, // never half a character
		{"bad\xffbyte", 20, "bad\uFFFDbyte"},
	}
	for _, tt := range tests {
		got := clip(tt.give, tt.max)
		if got != tt.want || len(got) > tt.max || !utf8.ValidString(got) {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.give, tt.max, got, tt.want)
		}
	}
}

// A switch document too large to pass through keeps the keys callers read,
// clipped, as valid JSON of the same shape; ours are added beside and never
// replace the switch's.
func TestDeviceDocIsBoundedAndKeepsTheSwitchsKeys(t *testing.T) {
	huge := strings.Repeat("\x01<é", 3000)
	doc, _ := json.Marshal(map[string]any{"status": "ok", "addition-info": fabric.PlaneConfigured, "reason": huge, "blob": huge})
	got := deviceDoc(string(doc), appDocKeys, map[string]any{"node_id": "sw-1", "status": "ours"})
	var back map[string]any
	if len(got) > maxDeviceDoc || json.Unmarshal([]byte(got), &back) != nil || back["status"] != "ok" ||
		back["addition-info"] != fabric.PlaneConfigured || back["node_id"] != "sw-1" || back["blob"] != nil || back["reason"] == "" {
		t.Errorf("%d bytes: %.200q", len(got), got)
	}
	small := `{"status":"not ok","reason":"","manager":{"state":"enabled"}}`
	if got := deviceDoc(small, appDocKeys, map[string]any{"status": "ours", "x": 1}); got != `{"manager":{"state":"enabled"},"reason":"","status":"not ok","x":1}` {
		t.Errorf("small doc: %s", got)
	}
}

func TestSummarise(t *testing.T) {
	entries := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf("e%d", i))
		}
		return out
	}
	tests := []struct {
		give []string
		want string
	}{
		{nil, ""},
		{entries(1), "e0"},
		{entries(10), "e0; e1; e2; e3; e4; e5; e6; e7; e8; e9"},
		{entries(11), "e0; e1; e2; e3; e4; e5; e6; e7; e8; e9; and 1 more"},
		{entries(1000), "e0; e1; e2; e3; e4; e5; e6; e7; e8; e9; and 990 more"},
	}
	for _, tt := range tests {
		if got := summarise(tt.give, "; "); got != tt.want {
			t.Errorf("summarise(%d entries) = %q, want %q", len(tt.give), got, tt.want)
		}
	}
	long := summarise([]string{strings.Repeat("x", 10_000)}, "; ")
	if len(long) > maxSummaryEntry {
		t.Fatalf("one entry is %d bytes", len(long))
	}
}

// A batch of 40 failing nodes with the longest ids and oversized
// addresses still answers a message of a few KiB: the first ten failures,
// then how many more; no node's error is longer than maxNodeError. The
// firmware batches refuse each node for its address, as every batch does,
// and start no job.
// addressReason starts the failure of a node whose BMC address is no IP
// address or host name.
const addressReason = ": bmc_endpoint ip_address"

func TestBatchMessagesAreBounded(t *testing.T) {
	client, _ := inventoryClient(t)
	fwClient := rmspb.NewRackManagerClient(startTestServer(t, Deps{Racks: racks.New(nil), Jobs: newTestEngine(t),
		Nodes: newOfflineRunner(t), Catalog: fuzzCatalog(t), FirmwareDir: t.TempDir()}))
	// noJobs checks a firmware batch that refused every node for reason
	// (the message clips each node's reason; its node result has it whole).
	noJobs := func(rpc string, r *rmspb.NodeBatchResponse, jobs []*rmspb.NodeFirmwareJobInfo, reason string) {
		if len(jobs) != 0 || r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
			t.Errorf("%s: status %v with %d jobs", rpc, r.GetStatus(), len(jobs))
		}
		for i, res := range r.GetNodeResults() {
			if !strings.Contains(res.GetErrorMessage(), reason) {
				t.Errorf("%s: node result %d: %q, want %q", rpc, i, res.GetErrorMessage(), reason)
				break
			}
		}
	}
	var nodes []hw.Node
	for i := 0; i < 40; i++ {
		nodes = append(nodes, hw.Node{ID: fmt.Sprintf("%0256d", i), RackID: "rack-h", Type: hw.ComputeGB200Nvidia,
			BMC: &hw.Endpoint{IP: strings.Repeat("x", 10_000), Credentials: hw.UserPass("admin", "pw")}})
	}
	tests := []struct {
		rpc    string
		prefix string // of the message, up to the first failure's node id
		reason string // the first failure's reason, or its start
		call   func() (failed uint32, msg string, results []*rmspb.NodeOperationResult, err error)
	}{
		{"BatchGetNodeDeviceInfo", "Completed with errors: node_id=", addressReason, func() (uint32, string, []*rmspb.NodeOperationResult, error) {
			resp, err := client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(nodes...)})
			return resp.GetStats().GetFailedNodes(), resp.GetMessage(), nil, err
		}},
		{"BatchGetFirmwareInventory", "Firmware inventory retrieved for 0/40 nodes; failed: node_id=", addressReason, func() (uint32, string, []*rmspb.NodeOperationResult, error) {
			resp, err := client.BatchGetFirmwareInventory(rpcContext(t), &rmspb.BatchGetFirmwareInventoryRequest{Nodes: nodeSet(nodes...)})
			r := resp.GetResponse()
			return r.GetStats().GetFailedNodes(), r.GetMessage(), r.GetNodeResults(), err
		}},
		{"CompareFirmwareObject", "Compared firmware object DGXGB200_small with 0/40 nodes: 0 match, 0 differ; failed: node_id=", addressReason, func() (uint32, string, []*rmspb.NodeOperationResult, error) {
			resp, err := client.CompareFirmwareObject(rpcContext(t), &rmspb.CompareFirmwareObjectRequest{ConfigJson: smallManifest, Nodes: nodeSet(nodes...)})
			r := resp.GetResponse()
			return r.GetStats().GetFailedNodes(), r.GetMessage(), r.GetNodeResults(), err
		}},
		{"BatchUpdateFirmware", "BatchUpdateFirmware: firmware update started for 0 of 40 nodes; failed: node_id=",
			addressReason, func() (uint32, string, []*rmspb.NodeOperationResult, error) {
				resp, err := fwClient.BatchUpdateFirmware(rpcContext(t), &rmspb.BatchUpdateFirmwareRequest{Nodes: nodeSet(nodes...),
					FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{
						int32(rmspb.NodeType_SWITCH_GB200_NVIDIA): {Targets: []*rmspb.FirmwareTarget{{Target: "bmc", Filename: "bmc.fwpkg"}}}}})
				r := resp.GetResponse()
				noJobs("BatchUpdateFirmware", r, resp.GetJobs(), "is neither an IP address nor a valid host name")
				return r.GetStats().GetFailedNodes(), r.GetMessage(), r.GetNodeResults(), err
			}},
		{"ApplyStoredFirmwareObject", "ApplyStoredFirmwareObject: firmware update started for 0 of 40 nodes; failed: node_id=",
			addressReason, func() (uint32, string, []*rmspb.NodeOperationResult, error) {
				resp, err := fwClient.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{Nodes: nodeSet(nodes...),
					ObjectId: fuzzObjects.ready, FirmwareType: "dev"})
				r := resp.GetResponse()
				noJobs("ApplyStoredFirmwareObject", r, resp.GetJobs(), "is neither an IP address nor a valid host name")
				return r.GetStats().GetFailedNodes(), r.GetMessage(), r.GetNodeResults(), err
			}},
		{"ApplyFirmwareObject", "ApplyFirmwareObject: firmware update started for 0 of 40 nodes; failed: node_id=",
			addressReason, func() (uint32, string, []*rmspb.NodeOperationResult, error) {
				resp, err := fwClient.ApplyFirmwareObject(rpcContext(t), &rmspb.ApplyFirmwareObjectRequest{Nodes: nodeSet(nodes...), ConfigJson: smallManifest})
				r := resp.GetResponse()
				noJobs("ApplyFirmwareObject", r, resp.GetJobs(), "is neither an IP address nor a valid host name")
				return r.GetStats().GetFailedNodes(), r.GetMessage(), r.GetNodeResults(), err
			}},
	}
	for _, tt := range tests {
		failed, msg, results, err := tt.call()
		if err != nil {
			t.Fatalf("%s: %v", tt.rpc, err)
		}
		if failed != 40 || len(msg) > 4096 || strings.Count(msg, "node_id=") != 10 ||
			!strings.HasPrefix(msg, tt.prefix+nodes[0].ID+tt.reason) ||
			!strings.HasSuffix(msg, "; and 30 more") {
			t.Errorf("%s: %d bytes: %q", tt.rpc, len(msg), msg)
		}
		for _, res := range results {
			if len(res.GetErrorMessage()) > maxNodeError {
				t.Errorf("%s: a %d-byte node error", tt.rpc, len(res.GetErrorMessage()))
			}
		}
	}
}
