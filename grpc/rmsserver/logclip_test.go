package rmsserver

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// A 3.8 MB filename that UpdateFirmware refuses is clipped in the log line
// as in the reply: the log grows by a few KiB, not by the value.
func TestLoggedValuesAreClippedLikeReplies(t *testing.T) {
	s := startSimRack(t)
	var logs syncBuffer
	m := &rackManager{deps: Deps{Racks: s.racks, Nodes: s.runner, Jobs: s.engine, FirmwareDir: t.TempDir()}, log: zerolog.New(&logs)}
	c := s.ofKind(hw.KindCompute)[0]
	resp, err := m.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{RackId: c.RackID, NodeId: c.ID,
		Filename: strings.Repeat("f", 3_800_000), Target: "bmc"})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("UpdateFirmware = %v, %v; want an in-band refusal", resp, err)
	}
	if n := len(logs.String()); n == 0 || n > 2*maxLogged {
		t.Fatalf("the refusal logged %d bytes; want a line within %d", n, 2*maxLogged)
	}
}
