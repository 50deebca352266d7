package rmsserver

import (
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// FuzzIDs checks the id rules on any string, alone and as a node's ids:
// an accepted id is valid UTF-8 of at most maxIDLength characters with no
// control or bidirectional formatting character; a refused one is
// INVALID_ARGUMENT whose message is itself safe to log and short, and the
// set check agrees with the single one.
func FuzzIDs(f *testing.F) {
	for _, id := range []string{"", "rack-001", "rack-001-compute-01", "é€", strings.Repeat("r", 257),
		"\x1b[31mred", "a\x00b", "n\nlevel=info msg=forged", "\u202eabc", "\xff", "\u2028"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := checkIDs(idField{"rack_id", id})
		safe := utf8.ValidString(id) && utf8.RuneCountInString(id) <= maxIDLength && !strings.ContainsFunc(id, hw.UnsafeRune)
		if (err == nil) != safe {
			t.Fatalf("checkIDs(%q) = %v; safe = %v", id, err, safe)
		}
		if err != nil {
			st, _ := status.FromError(err)
			if st.Code() != codes.InvalidArgument || hw.TextProblem(st.Message()) != "" || len(st.Message()) > 200 ||
				!strings.HasPrefix(st.Message(), "rack_id ") {
				t.Fatalf("checkIDs(%q): %v %q", id, st.Code(), st.Message())
			}
		}
		setErr := checkNodeSetIDs(&rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{{NodeId: "n", RackId: id}}})
		if (setErr == nil) != (err == nil) {
			t.Fatalf("checkNodeSetIDs disagrees on %q: %v vs %v", id, setErr, err)
		}
	})
}
