package rmsserver

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// FuzzSwitchAdmin drives the switch administration RPCs. Their jobs run
// against the fixture's sink; settle cancels the children it finds under
// the parent a reply names.
func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzSwitchAdmin", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_UpdateSwitchSystemPassword_FullMethodName, &rmspb.UpdateSwitchSystemPasswordRequest{},
			rmspb.RackManagerClient.UpdateSwitchSystemPassword, (*rackManager).UpdateSwitchSystemPassword),
		rpc(rmspb.RackManager_BatchResetSwitchFactoryDefault_FullMethodName, &rmspb.BatchResetSwitchFactoryDefaultRequest{},
			rmspb.RackManagerClient.BatchResetSwitchFactoryDefault, (*rackManager).BatchResetSwitchFactoryDefault),
		rpc(rmspb.RackManager_BatchResetSwitchSdnFactoryDefault_FullMethodName, &rmspb.BatchResetSwitchSdnFactoryDefaultRequest{},
			rmspb.RackManagerClient.BatchResetSwitchSdnFactoryDefault, (*rackManager).BatchResetSwitchSdnFactoryDefault),
	}})
}

func FuzzSwitchAdmin(f *testing.F) {
	rack := fuzzRackNodes(0)
	domain := "domain-a"
	for i, seed := range []proto.Message{
		&rmspb.UpdateSwitchSystemPasswordRequest{Nodes: nodeSet(rack[18], rack[19], rack[0]), Username: "admin", Password: "n3w-Pass"},
		&rmspb.BatchResetSwitchFactoryDefaultRequest{Nodes: nodeSet(rack[18], rack[30]), Domain: &domain},
		&rmspb.BatchResetSwitchSdnFactoryDefaultRequest{Nodes: nodeSet(rack[18], rack[18])},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	fuzzTarget(f, "FuzzSwitchAdmin")
}

// nodeBatchReply is a reply that wraps a NodeBatchResponse.
type nodeBatchReply interface {
	GetResponse() *rmspb.NodeBatchResponse
}

// switchAdminJobs returns the parent a switch administration reply names
// and its children, for settle to cancel and wait for.
func (fx *fuzzFixture) switchAdminJobs(t *testing.T, reply proto.Message) (parent string, children []string) {
	switch reply.(type) {
	case *rmspb.UpdateSwitchSystemPasswordResponse, *rmspb.BatchResetSwitchFactoryDefaultResponse,
		*rmspb.BatchResetSwitchSdnFactoryDefaultResponse, *rmspb.ConfigureSwitchCertificateResponse,
		*rmspb.BatchDisableSwitchMtlsResponse, *rmspbv2.StartSystemValidationResponse:
	default:
		return "", nil
	}
	parent = reply.(nodeBatchReply).GetResponse().GetJobId()
	if parent == "" {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), fuzzCallTimeout)
	defer cancel()
	jobs, err := fx.engine.Get(ctx, parent, true)
	if err != nil {
		t.Fatalf("read the jobs of %s: %v", parent, err)
	}
	for _, j := range jobs[1:] {
		children = append(children, j.ID)
	}
	return parent, children
}
