package forward

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rpcfields"
)

// Every method that may span racks splits a request naming nodes of two
// racks into one request per rack, each with its rack's nodes only and
// every other field kept, and merges the racks' replies into one whose
// per-node results are in the request's order and whose counts add up.
func TestEverySpanningMethodSplitsByRackAndMergesItsReplies(t *testing.T) {
	for method, route := range routes {
		if route.Span == NoSpan {
			continue
		}
		t.Run(methodName(method), func(t *testing.T) {
			req := newRequest(method)
			lists := nodeListsOf(req.ProtoReflect().Descriptor())
			if len(lists) == 0 {
				t.Fatal("no node list")
			}
			m := req.ProtoReflect()
			holder := m
			if lists[0].holder != nil {
				holder = m.Mutable(lists[0].holder).Message()
			}
			l := holder.Mutable(lists[0].list).List()
			for _, n := range [][2]string{{"rack-a", "n1"}, {"rack-b", "n2"}, {"rack-a", "n3"}} {
				e := l.NewElement().Message()
				e.Set(e.Descriptor().Fields().ByName("rack_id"), protoreflect.ValueOfString(n[0]))
				if f := e.Descriptor().Fields().ByName("node_id"); f != nil {
					e.Set(f, protoreflect.ValueOfString(n[1]))
				}
				l.Append(protoreflect.ValueOfMessage(e))
			}
			// A scalar beside the nodes must reach every part unchanged.
			var kept protoreflect.FieldDescriptor
			fields := m.Descriptor().Fields()
			for i := 0; i < fields.Len(); i++ {
				if f := fields.Get(i); f.Kind() == protoreflect.StringKind && !f.IsList() && f.Name() != "rack_id" {
					kept = f
					m.Set(f, protoreflect.ValueOfString("kept"))
					break
				}
			}
			racks := racksOf(req)
			if !slices.Equal(racks, []string{"rack-a", "rack-b"}) {
				t.Fatalf("racks %v", racks)
			}
			parts, order := splitByRack(req, racks)
			if len(parts) != 2 || !slices.Equal(order, []slot{{0, 0}, {1, 0}, {0, 1}}) {
				t.Fatalf("parts %d, order %v", len(parts), order)
			}
			for i, want := range [][]string{{"n1", "n3"}, {"n2"}} {
				pr, nodes := rpcfields.Targets(parts[i].req)
				if !slices.Equal(pr, []string{racks[i]}) || (len(nodes) > 0 && !slices.Equal(nodes, want)) || parts[i].nodes != len(want) {
					t.Errorf("part %d names racks %v nodes %v (%d)", i, pr, nodes, parts[i].nodes)
				}
				if kept != nil && parts[i].req.ProtoReflect().Get(kept).String() != "kept" {
					t.Errorf("part %d lost %s", i, kept.Name())
				}
			}
			// Each rack answers one result per node, in its part's order.
			replies := make([]rackReply, len(parts))
			for i, p := range parts {
				replies[i] = rackReply{p.rack, failedReply(method, "refused by "+p.rack, p)}
			}
			merged := merge(method, replies, order, "parent-1").ProtoReflect()
			resp := merged
			if f := merged.Descriptor().Fields().ByName("response"); f != nil {
				resp = merged.Get(f).Message()
			}
			if f := resp.Descriptor().Fields().ByName("node_results"); f != nil {
				var got []string
				rl := resp.Get(f).List()
				for i := 0; i < rl.Len(); i++ {
					r := rl.Get(i).Message().Interface().(*rmspb.NodeOperationResult)
					got = append(got, r.GetNodeId()+"@"+r.GetErrorMessage())
				}
				if want := []string{"n1@refused by rack-a", "n2@refused by rack-b", "n3@refused by rack-a"}; !slices.Equal(got, want) {
					t.Errorf("node results %v, want %v", got, want)
				}
			}
			if f := resp.Descriptor().Fields().ByName("stats"); f != nil {
				st := resp.Get(f).Message().Interface().(*rmspb.NodeOperationStats)
				if st.GetTotalNodes() != 3 || st.GetFailedNodes() != 3 {
					t.Errorf("stats %v", st)
				}
			}
			if msg, failed := rpcfields.Failure(merged.Interface()); !failed || msg != "rack rack-a: refused by rack-a; rack rack-b: refused by rack-b" {
				t.Errorf("merged failure %q %v", msg, failed)
			}
			if route.Span == SpanJobs && replyJobID(merged.Interface()) != "parent-1" {
				t.Errorf("job id %q", replyJobID(merged.Interface()))
			}
			if proto.Equal(parts[0].req, req) {
				t.Error("the first part is the whole request")
			}
		})
	}
}
