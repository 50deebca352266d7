package rmsserver

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// FuzzSwitchCert drives the switch mTLS RPCs. The fixture has no
// switch_cert_root, so a configure request with valid services is
// FAILED_PRECONDITION for its material, and bad services or no node are
// INVALID_ARGUMENT (upstream's codes); disable jobs run against the
// fixture's sink and are cancelled by settle.
func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzSwitchCert", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_ConfigureSwitchCertificate_FullMethodName, &rmspb.ConfigureSwitchCertificateRequest{},
			rmspb.RackManagerClient.ConfigureSwitchCertificate, (*rackManager).ConfigureSwitchCertificate),
		rpc(rmspb.RackManager_BatchDisableSwitchMtls_FullMethodName, &rmspb.BatchDisableSwitchMtlsRequest{},
			rmspb.RackManagerClient.BatchDisableSwitchMtls, (*rackManager).BatchDisableSwitchMtls),
	}})
	moreReplyProblems = append(moreReplyProblems, switchCertReplyProblem)
}

func FuzzSwitchCert(f *testing.F) {
	rack := fuzzRackNodes(0)
	domain := "site-a"
	for i, seed := range []proto.Message{
		&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodeSet(rack[18], rack[19], rack[0]), Domain: &domain,
			Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_NVUE_API}, TestHello: true},
		&rmspb.BatchDisableSwitchMtlsRequest{Nodes: nodeSet(rack[18], rack[18], rack[30]),
			Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY_INTERFACE, 9}},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	fuzzTarget(f, "FuzzSwitchCert")
}

// switchCertReplyProblem checks a switch mTLS reply: a bounded batch
// response, and for a configure one child job per started node, each
// naming a node of the results and a job id.
func switchCertReplyProblem(reply proto.Message) (string, bool) {
	switch r := reply.(type) {
	case *rmspb.ConfigureSwitchCertificateResponse:
		if p := batchProblem(r.GetResponse()); p != "" {
			return p, true
		}
		if r.GetResponse().GetJobId() == "" && len(r.GetJobs()) != 0 {
			return fmt.Sprintf("%d child jobs without a parent", len(r.GetJobs())), true
		}
		nodes := map[string]bool{}
		for _, n := range r.GetResponse().GetNodeResults() {
			nodes[n.GetNodeId()] = true
		}
		for _, j := range r.GetJobs() {
			if j.GetJobId() == "" || !nodes[j.GetNodeId()] {
				return fmt.Sprintf("child job %v names no node of the results", j), true
			}
		}
		return "", true
	case *rmspb.BatchDisableSwitchMtlsResponse:
		return batchProblem(r.GetResponse()), true
	}
	return "", false
}
