package rmsserver

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// unsafeIDs are ids that would forge terminal output or log lines, or that
// PostgreSQL cannot store (NUL), with the code point the refusal names.
var unsafeIDs = map[string]string{
	"\x1b[31mred":                        "U+001B",
	"a\x00b":                             "U+0000",
	"n1\nlevel=info msg=\"forged line\"": "U+000A",
	"rack\u202e1-kcar":                   "U+202E",
	"x\u2066y":                           "U+2066",
	"del\x7f":                            "U+007F",
}

// An id holding a control or bidirectional formatting character is refused
// with INVALID_ARGUMENT by every RPC that takes ids, naming the field and
// the character's code point without echoing the id; CreateNodes stores
// nothing and no job starts.
func TestUnsafeIDsAreInvalidArgument(t *testing.T) {
	s := startSimRack(t)
	idle, err := s.engine.Actors(rpcContext(t))
	if err != nil {
		t.Fatal(err)
	}
	before := len(idle.Actors)
	for id, point := range unsafeIDs {
		for _, c := range idCalls(s, rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF) {
			err := c.call(rpcContext(t), s.client, id)
			st, _ := status.FromError(err)
			want := c.field + " contains the control or bidirectional formatting character " + point
			if st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), want) {
				t.Errorf("%s with %s %q: %v %q, want INVALID_ARGUMENT %q", c.rpc, c.field, id, st.Code(), clip(st.Message(), 100), want)
			}
			if strings.Contains(st.Message(), id) {
				t.Errorf("%s echoes the unsafe id: %q", c.rpc, st.Message())
			}
		}
	}
	if got := len(s.racks.Nodes()); got != len(s.nodes) || len(s.racks.Racks()) != 1 {
		t.Fatalf("the registry changed: %d nodes, racks %v", got, s.racks.Racks())
	}
	if l, err := s.engine.Actors(rpcContext(t)); err != nil || len(l.Actors) != before || l.HeldNodes != 0 {
		t.Fatalf("the job engine changed: %+v, %v", l, err)
	}
}

// Invalid UTF-8 cannot cross gRPC in a proto3 string (the codec refuses
// it), but a handler is not the place to rely on that: the id check
// refuses it too.
func TestInvalidUTF8IDIsRefused(t *testing.T) {
	for _, err := range []error{
		checkIDs(idField{"job_id", "ok"}, idField{"rack_id", "r\xff"}),
		checkNodeSetIDs(&rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{{NodeId: "n\xc3", RackId: "r"}}}),
	} {
		if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "is not valid UTF-8") {
			t.Errorf("got %v", err)
		}
	}
}
