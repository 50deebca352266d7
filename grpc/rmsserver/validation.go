package rmsserver

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/messages"
)

// maxConfigOverride bounds StartSystemValidation's config_override: it is
// one command-line argument of every scan, and Linux refuses a single
// argument over 128 KiB.
const maxConfigOverride = 64 << 10

// StartSystemValidation starts one NVSSVT scan job per node under a parent
// job (hw/nvssvt): the batch conventions of the other job RPCs, each node
// refused on its own when it cannot be scanned (no BMC endpoint or no
// username and password on it, an id or address problem, named twice,
// held by another job). Each admitted node's job holds the node for the
// scan and runs NVSSVT as a subprocess; its result_json is the parsed
// report. config_override goes to every scan unchanged; only what no
// command line can carry (NUL characters, more than 64 KiB) is refused,
// with INVALID_ARGUMENT. Without [workflows] nvssvt_path every node is
// refused in band and no job starts.
func (m *rackManagerV2) StartSystemValidation(ctx context.Context, req *rmspbv2.StartSystemValidationRequest) (*rmspbv2.StartSystemValidationResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspbv2.StartSystemValidationResponse{Response: noNodesResponse()}, nil
	}
	override := req.GetConfigOverride()
	switch {
	case len(override) > maxConfigOverride:
		return nil, status.Errorf(codes.InvalidArgument, "config_override is %d bytes; at most %d fit on NVSSVT's command line", len(override), maxConfigOverride)
	case strings.ContainsRune(override, 0):
		return nil, status.Error(codes.InvalidArgument, "config_override contains a NUL character, which no command-line argument can carry")
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Jobs == nil {
		return nil, errUnavailable("system validation")
	}
	// The switch batches' admission, refusal and message are worded by
	// job type, so they serve this batch too.
	t := messages.TypeSystemValidation
	if !m.deps.Validation.Configured() {
		m.failed(ctx, "", "", nvssvt.ErrNotConfigured)
		return &rmspbv2.StartSystemValidationResponse{Response: refuseSwitchBatch(nodes, t, nvssvt.ErrNotConfigured)}, nil
	}
	runner := m.deps.Validation
	plan := func(n hw.Node) nvssvt.Plan { return nvssvt.Plan{Node: n, ConfigOverride: override} }
	v1 := &rackManager{deps: m.deps, log: m.log}
	resp, children, err := v1.admitSwitchBatch(ctx, switchBatch{operation: "StartSystemValidation", jobType: t, nodes: nodes,
		check:    func(n hw.Node) error { return plan(n).Check() },
		workflow: func(n hw.Node) messages.Workflow { return plan(n).Workflow(runner) }})
	if err != nil {
		return nil, err
	}
	out := &rmspbv2.StartSystemValidationResponse{Response: resp}
	for _, c := range children {
		out.Jobs = append(out.Jobs, &rmspbv2.NodeSystemValidationJobInfo{NodeId: c.nodeID, JobId: c.jobID})
		m.log.Info().Str("job_id", c.jobID).Str("node_id", c.nodeID).
			Str("log_dir", runner.LogDir(c.jobID)).Msg("system validation scan admitted")
	}
	return out, nil
}
