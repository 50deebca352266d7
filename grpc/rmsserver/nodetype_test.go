package rmsserver

import (
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// TestNodeTypesMatchTheWireEnum keeps hw.NodeType, the one Go spelling of
// node types, identical to rack_manager.NodeType.
func TestNodeTypesMatchTheWireEnum(t *testing.T) {
	for value, name := range rmspb.NodeType_name {
		if got := hw.NodeType(value).String(); got != name {
			t.Errorf("hw.NodeType(%d).String() = %q, wire name %q", value, got, name)
		}
	}
	if got, want := len(hw.NodeTypes()), len(rmspb.NodeType_name)-1; got != want {
		t.Errorf("hw.NodeTypes() has %d entries, the wire enum %d specified values", got, want)
	}
	for _, nt := range hw.NodeTypes() {
		if _, ok := rmspb.NodeType_name[int32(nt)]; !ok {
			t.Errorf("hw defines %v (%d), which the wire enum lacks", nt, int32(nt))
		}
		if nt.Kind() == hw.KindUnknown {
			t.Errorf("%v has no kind", nt)
		}
	}
}
