package rmsserver

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
)

// FuzzSystemValidation drives RackManagerV2.StartSystemValidation. Its
// scans run this test binary as the NVSSVT stand-in against the fixture's
// sink (connection refused: every check fails at once); settle cancels the
// children it finds under the parent a reply names, and the cancel kills
// any stand-in still running.
func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzSystemValidation", rpcs: []fuzzRPC{
		rpcV2(rmspbv2.RackManagerV2_StartSystemValidation_FullMethodName, &rmspbv2.StartSystemValidationRequest{},
			rmspbv2.RackManagerV2Client.StartSystemValidation),
	}})
	moreReplyProblems = append(moreReplyProblems, validationReplyProblem)
}

func FuzzSystemValidation(f *testing.F) {
	rack := fuzzRackNodes(0)
	for _, seed := range []proto.Message{
		&rmspbv2.StartSystemValidationRequest{Nodes: nodeSet(rack[0], rack[1], rack[0]), ConfigOverride: `{"skip":["chassis"]}`},
		&rmspbv2.StartSystemValidationRequest{Nodes: nodeSet(rack[18], rack[30])},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(0), data)
	}
	fuzzTarget(f, "FuzzSystemValidation")
}

// rpcV2 is rpc for a RackManagerV2 method; such families go through gRPC
// only.
func rpcV2[Req, Resp proto.Message](method string, empty Req,
	viaClient func(rmspbv2.RackManagerV2Client, context.Context, Req, ...grpc.CallOption) (Resp, error)) fuzzRPC {
	return fuzzRPC{
		method: method,
		newReq: func() proto.Message { return empty.ProtoReflect().New().Interface() },
		call: func(ctx context.Context, to fuzzCallee, req proto.Message) (proto.Message, error) {
			if to.v2 == nil {
				return nil, fmt.Errorf("%s: RackManagerV2 families are not direct", method)
			}
			resp, err := viaClient(to.v2, ctx, req.(Req))
			if err != nil {
				return nil, err
			}
			return resp, nil
		},
	}
}

// validationReplyProblem checks a StartSystemValidation reply: a
// consistent batch response, and one job per successful node result, in
// request order, each naming a job.
func validationReplyProblem(reply proto.Message) (string, bool) {
	r, ok := reply.(*rmspbv2.StartSystemValidationResponse)
	if !ok {
		return "", false
	}
	if p := batchProblem(r.GetResponse()); p != "" {
		return p, true
	}
	var started []string
	for _, nr := range r.GetResponse().GetNodeResults() {
		if nr.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			started = append(started, nr.GetNodeId())
		}
	}
	jobs := r.GetJobs()
	if len(r.GetResponse().GetNodeResults()) > 0 && len(jobs) != len(started) {
		return fmt.Sprintf("%d jobs for %d successful nodes", len(jobs), len(started)), true
	}
	for i, j := range jobs {
		if j.GetJobId() == "" || (len(started) > 0 && j.GetNodeId() != started[i]) {
			return fmt.Sprintf("job %d is %v", i, j), true
		}
	}
	if len(jobs) > 0 && r.GetResponse().GetJobId() == "" {
		return "jobs without a parent", true
	}
	return "", true
}

// fuzzValidation is the fuzz fixture's NVSSVT runner: this test binary as
// the stand-in (see TestMain).
func fuzzValidation(f *testing.F) *nvssvt.Runner {
	exe, err := os.Executable()
	if err != nil {
		f.Fatal(err)
	}
	return nvssvt.New(nvssvt.Config{Path: exe, Args: []string{nvssvtsim.Command}, LogRoot: f.TempDir(),
		Timeout: fuzzCallTimeout, TermGrace: time.Second})
}
