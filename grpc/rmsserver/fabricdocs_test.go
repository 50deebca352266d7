package rmsserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
)

// nicoFabricManagerStatus mirrors what NICo (component-manager rms.rs,
// RmsFabricManagerStatusPayload) decodes from a status_json: a switch reads
// as running only for status "ok", and as a configured primary only with
// addition-info CONTROL_PLANE_STATE_CONFIGURED.
type nicoFabricManagerStatus struct {
	Status       *string `json:"status"`
	AdditionInfo *string `json:"addition-info"`
	Reason       *string `json:"reason"`
}

func TestFabricServiceStatusReadsAsNICoReadsIt(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	r.nvos(t, switches[0].ID).EnableCluster(true)
	resp, err := r.client.BatchGetScaleUpFabricServiceStatus(fabricCtx(t), &rmspb.BatchGetScaleUpFabricServiceStatusRequest{
		Nodes: nodeSet(switches[0], switches[1])})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("%v, %v", resp, err)
	}
	doc := resp.GetServiceStatuses()[switches[0].ID].GetStatusJson()
	var got nicoFabricManagerStatus
	if err := json.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatalf("status_json %q: %v", doc, err)
	}
	if got.Status == nil || *got.Status != "ok" || got.AdditionInfo == nil || *got.AdditionInfo != fabric.PlaneConfigured ||
		got.Reason == nil || *got.Reason != "" {
		t.Fatalf("configured primary reads %s", doc)
	}
	// The switch's own keys pass through (manager.state), ours beside them.
	var all map[string]any
	_ = json.Unmarshal([]byte(doc), &all)
	if mgr, _ := all["manager"].(map[string]any); mgr["state"] != "enabled" || all["node_id"] != switches[0].ID ||
		all["installed"] != true || all["health_status"] != "green" {
		t.Fatalf("status_json %s", doc)
	}
	// A switch whose cluster is disabled has no app: NICo reads no status;
	// upstream's not-installed keys.
	offDoc := resp.GetServiceStatuses()[switches[1].ID].GetStatusJson()
	var off nicoFabricManagerStatus
	var offAll map[string]any
	if json.Unmarshal([]byte(offDoc), &off) != nil || off.Status != nil || json.Unmarshal([]byte(offDoc), &offAll) != nil ||
		offAll["installed"] != false || offAll["health_status"] != "unknown" {
		t.Fatalf("disabled switch: %s", offDoc)
	}
}

func TestFabricStateAndTelemetryDocumentsCarryUpstreamsKeys(t *testing.T) {
	r := startFabricRack(t)
	sw := r.ofKind(hw.KindSwitch)[0]
	r.nvos(t, sw.ID).EnableCluster(true)
	ctx := fabricCtx(t)
	st, err := r.client.GetScaleUpFabricState(ctx, &rmspb.GetScaleUpFabricStateRequest{Node: NodeInfoToProto(sw)})
	if err != nil || st.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("%v, %v", st, err)
	}
	// upstream's get_cluster_state: NVUE's cluster document plus
	// cluster_healthy.
	var cl struct {
		State          string `json:"state"`
		NMXCConn       string `json:"nmxc-conn"`
		ClusterHealthy bool   `json:"cluster_healthy"`
	}
	if err := json.Unmarshal([]byte(st.GetStateJson()), &cl); err != nil || cl.State != "enabled" || cl.NMXCConn != "up" || !cl.ClusterHealthy {
		t.Fatalf("state_json %s: %v", st.GetStateJson(), err)
	}
	// upstream's gnmi_service: {"status":"success","state":<reached>}.
	for _, enable := range []bool{true, false} {
		resp, err := r.client.SetScaleUpFabricTelemetryInterfaceState(ctx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: NodeInfoToProto(sw), Enable: enable})
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			t.Fatalf("enable=%v: %v, %v", enable, resp, err)
		}
		var out struct{ Status, State string }
		want := map[bool]string{true: "enabled", false: "disabled"}[enable]
		if err := json.Unmarshal([]byte(resp.GetResultJson()), &out); err != nil || out.Status != "success" || out.State != want {
			t.Fatalf("enable=%v: result_json %s: %v", enable, resp.GetResultJson(), err)
		}
	}
}

func TestGetScaleUpFabricStatusFailsWhenNoSwitchCouldBeRead(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)[:2]
	for _, sw := range switches {
		r.nvos(t, sw.ID).Unreachable(time.Hour)
	}
	resp, err := r.client.GetScaleUpFabricStatus(fabricCtx(t), &rmspb.GetScaleUpFabricStatusRequest{Nodes: nodeSet(switches...)})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetErrorMessage() != "failed to inspect any requested switch" {
		t.Fatalf("%v, %v", resp, err)
	}
	sws := resp.GetFabricStatus().GetSwitches()
	if len(sws) != 2 || sws[0].GetErrorMessage() == "" || sws[1].GetErrorMessage() == "" {
		t.Fatalf("partial status %v", resp.GetFabricStatus())
	}
}

func TestGetScaleUpFabricStatusNeedsExactlyOneEnabledSwitch(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	r.nvos(t, switches[0].ID).EnableCluster(true)
	r.nvos(t, switches[2].ID).EnableCluster(true)
	resp, err := r.client.GetScaleUpFabricStatus(fabricCtx(t), &rmspb.GetScaleUpFabricStatusRequest{Nodes: nodeSet(switches[0], switches[1], switches[2])})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		!strings.HasPrefix(resp.GetErrorMessage(), "multiple switches report scale-up fabric enabled") ||
		!strings.Contains(resp.GetErrorMessage(), switches[0].ID) || !strings.Contains(resp.GetErrorMessage(), switches[2].ID) ||
		strings.Contains(resp.GetErrorMessage(), switches[1].ID) {
		t.Fatalf("%v, %v", resp, err)
	}
	st := resp.GetFabricStatus()
	if st.GetTopologyType() != "" || len(st.GetSwitches()) != 3 || !st.GetSwitches()[0].GetEnabled() || !st.GetSwitches()[2].GetEnabled() {
		t.Fatalf("partial status %v", st)
	}
}
