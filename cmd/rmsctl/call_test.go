package main

import (
	"strings"
	"testing"

	"github.com/rmsd/rmsd/cmd/rmsctl/internal/ctl"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestCallAnyRPC: `rmsctl call` sends a protobuf JSON request to any RPC
// of either service and prints the reply, with the exit codes of the other
// commands.
func TestCallAnyRPC(t *testing.T) {
	v := jsonReply(t, ok(t, "-o", "json", "call", "GetVersion"), func() *rmspb.GetVersionResponse { return &rmspb.GetVersionResponse{} })
	if v.GetVersion() == "" {
		t.Fatalf("GetVersion through call: %v", v)
	}

	var sw *rmspb.NodeInfo
	for _, n := range simulatedNodes(t).GetNodes() {
		if n.GetType() == rmspb.NodeType_SWITCH_GB200_NVIDIA {
			sw = n
			break
		}
	}
	if sw == nil {
		t.Fatal("the simulated rack has no switch")
	}
	req := writeProtoJSON(t, &rmspb.GetScaleUpFabricStateRequest{Node: sw})
	st := jsonReply(t, ok(t, "-o", "json", "call", "RackManager/GetScaleUpFabricState", "-d", "@"+req),
		func() *rmspb.GetScaleUpFabricStateResponse { return &rmspb.GetScaleUpFabricStateResponse{} })
	if st.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || !strings.Contains(st.GetStateJson(), sw.GetNodeId()) {
		t.Fatalf("GetScaleUpFabricState through call: %v", st)
	}
	// The text form is the same reply, indented.
	if out := ok(t, "call", "RackManager/GetScaleUpFabricState", "-d", "@"+req); !strings.Contains(out, "\"state_json\":") {
		t.Fatalf("text output: %s", out)
	}

	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"in-band failure", []string{"call", "GetSwitchSystemImageJobStatus", "-d", `{"job_id":"no-such-job"}`}, ctl.ExitFailed, "FAILURE"},
		{"unknown job", []string{"call", "GetJobStatus", "-d", `{"job_id":"no-such-job"}`}, ctl.ExitNotFound, "GetJobStatus"},
		{"refused request", []string{"call", "RackManagerV2/ConfigureScaleUpFabricManager"}, ctl.ExitRefused, "InvalidArgument"},
		{"name in both services", []string{"call", "ConfigureScaleUpFabricManager"}, ctl.ExitUsage, "both services"},
		{"no such RPC", []string{"call", "RackManager/Nope"}, ctl.ExitUsage, "no RPC"},
		{"not the request's JSON", []string{"call", "GetVersion", "-d", `{"password":"hunter2-secret"}`}, ctl.ExitUsage, "GetVersionRequest"},
		{"a bad value", []string{"call", "CreateNodes", "-d", `{"nodes":{"nodes":[{"node_id":hunter2-secret}]}}`}, ctl.ExitUsage, "not shown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rmsctl(t, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.says) {
				t.Fatalf("exit %d, stderr %q; want %d naming %q", r.code, r.stderr, c.code, c.says)
			}
			if strings.Contains(r.stderr+r.stdout, "hunter2-secret") {
				t.Fatal("the request's text is quoted back")
			}
		})
	}
}
