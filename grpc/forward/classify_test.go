package forward

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/messages"
)

// Every method of both services has a route, and the table names no
// method they do not have: a method added to a service without a
// decision where it is served fails here.
func TestEveryMethodIsClassified(t *testing.T) {
	known := map[string]bool{}
	for _, desc := range []struct {
		name    string
		methods int
	}{{rmspb.RackManager_ServiceDesc.ServiceName, len(rmspb.RackManager_ServiceDesc.Methods)},
		{rmspbv2.RackManagerV2_ServiceDesc.ServiceName, len(rmspbv2.RackManagerV2_ServiceDesc.Methods)}} {
		if desc.methods == 0 {
			t.Fatalf("%s has no methods", desc.name)
		}
	}
	for _, sd := range [][]string{methodsOf(rmspb.RackManager_ServiceDesc.ServiceName, rmspb.RackManager_ServiceDesc.Methods),
		methodsOf(rmspbv2.RackManagerV2_ServiceDesc.ServiceName, rmspbv2.RackManagerV2_ServiceDesc.Methods)} {
		for _, m := range sd {
			known[m] = true
			r, ok := RouteOf(m)
			if !ok {
				t.Errorf("%s is not classified", m)
				continue
			}
			if r.Class < Local || r.Class > ByRack {
				t.Errorf("%s: class %v", m, r.Class)
			}
			if r.Span != NoSpan && r.Class != ByRack {
				t.Errorf("%s: only ByRack methods span racks", m)
			}
			if (r.Span == SpanJobs) != (r.JobType != messages.TypeNone) {
				t.Errorf("%s: a batch across racks needs its job type, and only it", m)
			}
			if r.Class == ByRack && r.Span == NoSpan && len(nodeListsOf(newRequest(m).ProtoReflect().Descriptor())) > 0 && !oneRackHandlers[m] {
				t.Errorf("%s may name nodes of several racks: it must span them, or refuse them itself (oneRackHandlers)", m)
			}
			if newRequest(m) == nil || newReply(m) == nil {
				t.Errorf("%s: no message types", m)
			}
		}
	}
	for m := range routes {
		if !known[m] {
			t.Errorf("the table classifies %s, which neither service has", m)
		}
	}
}

func methodsOf(service string, methods []grpc.MethodDesc) []string {
	out := make([]string, len(methods))
	for i, m := range methods {
		out[i] = "/" + service + "/" + m.MethodName
	}
	return out
}
