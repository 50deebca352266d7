package rmsserver

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// TestEveryRPCIsImplementedOrPending calls every method of both services
// with an empty request. A pending RPC must answer UNIMPLEMENTED; any other
// must not. Every name on the pending list must be a real method.
func TestEveryRPCIsImplementedOrPending(t *testing.T) {
	conn := startTestServer(t, Deps{Version: "test"})
	services := []protoreflect.ServiceDescriptor{
		rmspb.File_rack_manager_rack_manager_proto.Services().ByName("RackManager"),
		rmspbv2.File_rack_manager_v2_rack_manager_v2_proto.Services().ByName("RackManagerV2"),
	}
	seen := map[string]bool{}
	total := 0
	for _, svc := range services {
		methods := svc.Methods()
		for i := 0; i < methods.Len(); i++ {
			m := methods.Get(i)
			name := "/" + string(svc.FullName()) + "/" + string(m.Name())
			seen[name] = true
			total++
			in := dynamicpb.NewMessage(m.Input())
			out := dynamicpb.NewMessage(m.Output())
			err := conn.Invoke(rpcContext(t), name, in, out)
			unimplemented := status.Code(err) == codes.Unimplemented
			switch {
			case pendingRPCs[name] && !unimplemented:
				t.Errorf("%s is implemented (answered %v): remove it from pendingRPCs", name, status.Code(err))
			case !pendingRPCs[name] && unimplemented:
				t.Errorf("%s answers UNIMPLEMENTED but is not on the pending list", name)
			}
		}
	}
	if total != 54 {
		t.Errorf("the services define %d RPCs, want 52 + 2", total)
	}
	for name := range pendingRPCs {
		if !seen[name] {
			t.Errorf("pending list names %s, which is not an RPC of either service", name)
		}
	}
}
