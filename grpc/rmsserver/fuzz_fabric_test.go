package rmsserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// FuzzFabric drives the v1 scale-up fabric RPCs against the fixture's
// rack: every switch is at the refusing sink, so each switch fails in-band.
// The property: status set, bounded messages, a FAILURE names why, JSON
// answers parse, batch stats agree with the node results.

func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzFabric", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_ConfigureScaleUpFabricManager_FullMethodName, &rmspb.ConfigureScaleUpFabricManagerRequest{},
			rmspb.RackManagerClient.ConfigureScaleUpFabricManager, (*rackManager).ConfigureScaleUpFabricManager),
		rpc(rmspb.RackManager_BatchSetScaleUpFabricState_FullMethodName, &rmspb.BatchSetScaleUpFabricStateRequest{},
			rmspb.RackManagerClient.BatchSetScaleUpFabricState, (*rackManager).BatchSetScaleUpFabricState),
		rpc(rmspb.RackManager_GetScaleUpFabricState_FullMethodName, &rmspb.GetScaleUpFabricStateRequest{},
			rmspb.RackManagerClient.GetScaleUpFabricState, (*rackManager).GetScaleUpFabricState),
		rpc(rmspb.RackManager_BatchGetScaleUpFabricServiceStatus_FullMethodName, &rmspb.BatchGetScaleUpFabricServiceStatusRequest{},
			rmspb.RackManagerClient.BatchGetScaleUpFabricServiceStatus, (*rackManager).BatchGetScaleUpFabricServiceStatus),
		rpc(rmspb.RackManager_SetScaleUpFabricTelemetryInterfaceState_FullMethodName, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{},
			rmspb.RackManagerClient.SetScaleUpFabricTelemetryInterfaceState, (*rackManager).SetScaleUpFabricTelemetryInterfaceState),
		rpc(rmspb.RackManager_GetScaleUpFabricStatus_FullMethodName, &rmspb.GetScaleUpFabricStatusRequest{},
			rmspb.RackManagerClient.GetScaleUpFabricStatus, (*rackManager).GetScaleUpFabricStatus),
		rpc(rmspb.RackManager_InspectScaleUpFabrics_FullMethodName, &rmspb.InspectScaleUpFabricsRequest{},
			rmspb.RackManagerClient.InspectScaleUpFabrics, (*rackManager).InspectScaleUpFabrics),
	}})
	moreReplyProblems = append(moreReplyProblems, fabricReplyProblem)
}

// fuzzFabric is the fixture's fabric policy: every port of a switch is the
// sink, and every wait is short.
func fuzzFabric(t testing.TB, sinkPort int) *fabric.Options {
	nv, err := nvue.NewPool(nvue.Options{Port: sinkPort, ConnectTimeout: 200 * time.Millisecond, RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	return &fabric.Options{
		NVUE: nv,
		SSH:  sshsftp.Options{Port: sinkPort, ConnectTimeout: 200 * time.Millisecond},
		NMXC: nmxc.Options{Port: sinkPort, ConnectTimeout: 200 * time.Millisecond, RequestTimeout: 500 * time.Millisecond,
			HelloRetry: time.Millisecond},
		GNMI:   gnmicap.Options{Port: sinkPort, Timeout: 500 * time.Millisecond},
		Timing: fabric.Timing{}.Scaled(0.0001),
	}
}

func FuzzFabric(f *testing.F) {
	rack := fuzzRackNodes(0)
	domain := "domain-a"
	for i, seed := range []proto.Message{
		&rmspb.ConfigureScaleUpFabricManagerRequest{Node: NodeInfoToProto(rack[18]), TopologyType: "gb200_nvl72r1_c2g4_topology", Domain: &domain},
		&rmspb.BatchSetScaleUpFabricStateRequest{Nodes: nodeSet(rack[18], rack[19], rack[0], rack[18]), Enabled: true},
		&rmspb.GetScaleUpFabricStateRequest{Node: NodeInfoToProto(rack[0])},
		&rmspb.BatchGetScaleUpFabricServiceStatusRequest{Nodes: nodeSet(rack[18], rack[18], rack[30])},
		&rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: NodeInfoToProto(rack[19]), Enable: true},
		&rmspb.GetScaleUpFabricStatusRequest{Nodes: nodeSet(rack[18], rack[19]), Domain: &domain},
		&rmspb.InspectScaleUpFabricsRequest{Nodes: nodeSet(rack[18], rack[19], rack[0]), ComputeNodes: nodeSet(rack[0], rack[1], rack[18])},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	fuzzTarget(f, "FuzzFabric")
}

// fabricReplyProblem is replyProblem for the family's replies.
func fabricReplyProblem(reply proto.Message) (string, bool) {
	jsonProblem := func(ok bool, s string) string {
		if ok != (s != "") {
			return fmt.Sprintf("success %t with JSON %q", ok, clip(s, 100))
		}
		if s != "" && !json.Valid([]byte(s)) {
			return "JSON does not parse"
		}
		return ""
	}
	success := func(st rmspb.ReturnCode) bool { return st == rmspb.ReturnCode_RETURN_CODE_SUCCESS }
	switch r := reply.(type) {
	case *rmspb.ConfigureScaleUpFabricManagerResponse:
		if r.GetMessage() == "" {
			return "no message", true
		}
		if success(r.GetStatus()) && (!r.GetScaleUpFabricStateEnabled() || !r.GetGrpcEnabled() || r.GetTopologyUsed() == "") {
			return "SUCCESS without the fabric on", true
		}
		return statusProblem(r.GetStatus(), r.GetMessage()), true
	case *rmspb.BatchSetScaleUpFabricStateResponse:
		if r.GetResponse().GetJobId() != "" {
			return "a job id from a synchronous RPC", true
		}
		return batchProblem(r.GetResponse()), true
	case *rmspb.GetScaleUpFabricStateResponse:
		if !success(r.GetStatus()) && r.GetErrorMessage() == "" {
			return "FAILURE without an error message", true
		}
		return firstProblem(statusProblem(r.GetStatus(), r.GetErrorMessage()), jsonProblem(success(r.GetStatus()), r.GetStateJson())), true
	case *rmspb.SetScaleUpFabricTelemetryInterfaceStateResponse:
		if !success(r.GetStatus()) && r.GetErrorMessage() == "" {
			return "FAILURE without an error message", true
		}
		return firstProblem(statusProblem(r.GetStatus(), r.GetErrorMessage()), jsonProblem(success(r.GetStatus()), r.GetResultJson())), true
	case *rmspb.BatchGetScaleUpFabricServiceStatusResponse:
		st := r.GetStats()
		if int(st.GetTotalNodes()) != int(st.GetSuccessfulNodes()+st.GetFailedNodes()) {
			return fmt.Sprintf("stats %v do not add up", st), true
		}
		for id, e := range r.GetServiceStatuses() {
			if p := jsonProblem(e.GetErrorMessage() == "", e.GetStatusJson()); p != "" {
				return fmt.Sprintf("node %q: %s", clip(id, 100), p), true
			}
			if len(e.GetErrorMessage()) > maxAnswerMessage {
				return "an unbounded error message", true
			}
		}
		return statusProblem(r.GetStatus(), ""), true
	case *rmspb.GetScaleUpFabricStatusResponse:
		// A FAILURE may keep the switches it read (upstream's partial
		// status); a SUCCESS always has the status.
		if success(r.GetStatus()) && r.GetFabricStatus() == nil {
			return "SUCCESS without fabric_status", true
		}
		if !success(r.GetStatus()) && r.GetErrorMessage() == "" {
			return "FAILURE without an error message", true
		}
		for i, s := range r.GetFabricStatus().GetSwitches() {
			if len(s.GetErrorMessage()) > maxAnswerMessage || len(s.GetFabricManagerStatus()) > maxAnswerMessage {
				return fmt.Sprintf("switches[%d]: unbounded text", i), true
			}
			if ms := s.GetFabricManagerStatus(); len(ms) > maxEchoed || strings.ContainsAny(ms, "{}") {
				return fmt.Sprintf("switches[%d]: fabric_manager_status %q is not the app's status word", i, clip(ms, 100)), true
			}
		}
		return statusProblem(r.GetStatus(), r.GetErrorMessage()), true
	case *rmspb.InspectScaleUpFabricsResponse:
		errs := len(r.GetDiscoveryErrors())
		for _, f := range r.GetFabrics() {
			errs += len(f.GetInspectionErrors())
			if f.GetPrimarySwitchNodeId() == "" {
				return "an observation without its controller", true
			}
		}
		if success(r.GetStatus()) != (errs == 0 && r.GetErrorMessage() == "") {
			return fmt.Sprintf("status %v with %d errors and message %q", r.GetStatus(), errs, clip(r.GetErrorMessage(), 100)), true
		}
		return statusProblem(r.GetStatus(), r.GetErrorMessage()), true
	}
	return "", false
}
