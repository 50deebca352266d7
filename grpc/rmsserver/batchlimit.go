package rmsserver

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// DefaultMaxBatchNodes is the per-request node limit when Deps leaves it
// zero: room for a large site (over 60 NVL72 racks of 72 nodes) in one
// request, far below what would let one request fill the job tracker.
const DefaultMaxBatchNodes = 5000

// maxBatchNodes returns the configured per-request node limit.
func (d *Deps) maxBatchNodes() int {
	if d.MaxBatchNodes > 0 {
		return d.MaxBatchNodes
	}
	return DefaultMaxBatchNodes
}

// nodesFromProto is the one path every RPC taking a node list converts it
// by: a set naming more nodes than [workflows] max_batch_nodes is refused
// with INVALID_ARGUMENT naming the limit, before any node is checked,
// stored or touched; the rest is convertNodes.
func (d *Deps) nodesFromProto(set *rmspb.NodeSet) ([]hw.Node, error) {
	if n, limit := len(set.GetNodes()), d.maxBatchNodes(); n > limit {
		return nil, status.Errorf(codes.InvalidArgument,
			"request names %d nodes, more than the limit of %d per request ([workflows] max_batch_nodes); split it into smaller requests", n, limit)
	}
	return convertNodes(set)
}
