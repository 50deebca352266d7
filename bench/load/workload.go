package main

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/bench/replay"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// workload is one measured RPC and the requests it sends.
type workload struct {
	name   string // the RPC's short name, as the report shows it
	method string // its full gRPC method name
	reply  func() proto.Message
	// request is the n-th request of a run; prefix is unique to the run.
	request func(prefix string, n int64) proto.Message
	// admission marks the firmware apply: a fixed number of calls per
	// run, each starting jobs that the run waits for.
	admission bool
}

// workloads are the measured RPCs on f, in the report's order.
func workloads(f fixture) []workload {
	same := func(m proto.Message) func(string, int64) proto.Message {
		return func(string, int64) proto.Message { return m }
	}
	return []workload{
		{
			name: "GetJobStatus", method: replay.GetJobStatus,
			reply:   func() proto.Message { return &rmspb.GetJobStatusResponse{} },
			request: same(&rmspb.GetJobStatusRequest{JobId: f.jobID}),
		},
		{
			name: "GetVersion", method: replay.GetVersion,
			reply:   func() proto.Message { return &rmspb.GetVersionResponse{} },
			request: same(&rmspb.GetVersionRequest{}),
		},
		{
			name: "BatchGetPowerState", method: replay.BatchGetPowerState,
			reply:   func() proto.Message { return &rmspb.BatchGetPowerStateResponse{} },
			request: same(&rmspb.BatchGetPowerStateRequest{Nodes: f.nodes}),
		},
		{
			name: "ApplyStoredFirmwareObject", method: replay.ApplyStoredFirmwareObject, admission: true,
			reply: func() proto.Message { return &rmspb.ApplyStoredFirmwareObjectResponse{} },
			request: func(prefix string, n int64) proto.Message {
				rack := admissionRack(prefix, n)
				nodes := proto.Clone(f.nodes).(*rmspb.NodeSet)
				for i, node := range nodes.GetNodes() {
					node.RackId = rack
					setDeviceAddr(node.GetBmcEndpoint(), admissionAddr(n, i))
					setDeviceAddr(node.GetHostEndpoint(), admissionAddr(n, i))
				}
				return &rmspb.ApplyStoredFirmwareObjectRequest{RackId: rack, ObjectId: f.objectID, Nodes: nodes}
			},
		},
	}
}

// admissionRack is the rack id the n-th admission of a run names for the
// simulated rack's nodes: one of its own, so that no admission is refused
// on a node another admission's job holds.
func admissionRack(prefix string, n int64) string {
	return fmt.Sprintf("%s-%d", prefix, n)
}

// admissionAddr is the loopback address of the i-th node of the n-th
// admission of a run: 127.200.0.0 on, 64 addresses an admission (a rack
// has 35 nodes), where nothing listens. rmsd holds devices, not names: the
// simulated rack's BMCs under a fresh rack id are the same devices, and
// concurrent admissions of them would be refused, so each admission names
// devices of its own (their jobs fail at once on the refused connection;
// the admission, which is what is measured, is the same).
func admissionAddr(n int64, i int) string {
	off := 200<<16 + int(n%(55<<10))*64 + i
	return fmt.Sprintf("127.%d.%d.%d", off>>16&0xff, off>>8&0xff, off&0xff)
}

// setDeviceAddr points an endpoint, when there is one, at addr.
func setDeviceAddr(e *rmspb.Endpoint, addr string) {
	if e.GetInterface() != nil {
		e.Interface.IpAddress = addr
		e.Interface.HostName = nil
	}
}

// ghzCall is the method as ghz names it, "package.Service.Method".
func (w workload) ghzCall() string {
	return strings.Replace(strings.TrimPrefix(w.method, "/"), "/", ".", 1)
}

// invoke sends req to conn and returns the decoded reply.
func invoke(ctx context.Context, conn grpc.ClientConnInterface, w workload, req proto.Message) (proto.Message, error) {
	reply := w.reply()
	if err := conn.Invoke(ctx, w.method, req, reply); err != nil {
		return nil, fmt.Errorf("%s: %w", w.name, err)
	}
	return reply, nil
}
