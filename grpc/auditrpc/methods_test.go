package auditrpc

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// TestEveryRMSMethodIsClassified: each method of both RMS services is
// either mutating (audited) or a read, never both, so a new RPC fails here
// until someone decides.
func TestEveryRMSMethodIsClassified(t *testing.T) {
	n := 0
	for _, desc := range []grpc.ServiceDesc{rmspb.RackManager_ServiceDesc, rmspbv2.RackManagerV2_ServiceDesc} {
		for _, m := range desc.Methods {
			full := "/" + desc.ServiceName + "/" + m.MethodName
			n++
			if mutating[full] == reads[full] {
				t.Errorf("%s: mutating %v, read %v; want exactly one", full, mutating[full], reads[full])
			}
		}
	}
	if n != len(mutating)+len(reads) {
		t.Errorf("%d methods, %d classified: the sets name methods the services lack", n, len(mutating)+len(reads))
	}
	if !Mutating(rmspb.RackManager_UpdateSwitchSystemPassword_FullMethodName) || Mutating(rmspb.RackManager_GetJobStatus_FullMethodName) ||
		Mutating("/grpc.health.v1.Health/Check") {
		t.Error("Mutating misclassifies")
	}
}
