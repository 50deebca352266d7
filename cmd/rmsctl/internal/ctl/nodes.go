package ctl

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func (a *app) nodesCommand() *cobra.Command {
	nodes := &cobra.Command{Use: "nodes", Short: "Register, update, delete and list nodes"}
	nodes.AddCommand(a.nodesListCommand(), a.nodesCreateCommand(), a.nodesUpdateCommand(), a.nodesDeleteCommand())
	return nodes
}

func (a *app) nodesListCommand() *cobra.Command {
	var rack string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List registered nodes (ListNodeInventory), optionally of one rack",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := call(cmd.Context(), a, "ListNodeInventory", &rmspb.ListNodeInventoryRequest{}, rmspb.RackManagerClient.ListNodeInventory)
			if err != nil {
				return err
			}
			if rack != "" {
				var kept []*rmspb.NodeInventoryInfo
				for _, n := range resp.GetNodes() {
					if n.GetRackId() == rack {
						kept = append(kept, n)
					}
				}
				resp.Nodes = kept
				if len(kept) == 0 {
					if err := a.knownRack(cmd.Context(), rack); err != nil {
						return err
					}
				}
			}
			return a.emit(resp, func(w io.Writer) {
				t := newTable(w, "RACK", "NODE", "TYPE", "ADDRESS", "HEALTH")
				for _, n := range resp.GetNodes() {
					addr := n.GetIpAddress()
					if addr != "" && n.GetPort() != 0 {
						addr = fmt.Sprintf("%s:%d", addr, n.GetPort())
					}
					t.row(n.GetRackId(), n.GetNodeId(), nodeType(n.GetType()), addr, n.GetHealth())
				}
				t.flush()
			})
		},
	}
	cmd.Flags().StringVar(&rack, "rack", "", "only the nodes of this rack")
	return cmd
}

func (a *app) nodesCreateCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "create -f NODESET.json",
		Short: "Register the nodes of a NodeSet file (CreateNodes), e.g. simulated-nodes.json",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := readNodeSet("-f", file)
			if err != nil {
				return err
			}
			resp, err := call(cmd.Context(), a, "CreateNodes", &rmspb.CreateNodesRequest{Nodes: set}, rmspb.RackManagerClient.CreateNodes)
			if err != nil {
				return err
			}
			return a.emitOperation("CreateNodes", resp, resp.GetResponse())
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "NodeSet file (protobuf JSON)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func (a *app) nodesUpdateCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "update -f NODE.json",
		Short: "Replace a registered node's endpoints with those of a NodeInfo file (UpdateNode)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var n rmspb.NodeInfo
			if err := readProtoJSON("-f", file, &n); err != nil {
				return err
			}
			if n.GetRackId() == "" || n.GetNodeId() == "" {
				return usageError("-f %s: the node needs rack_id and node_id", file)
			}
			req := &rmspb.UpdateNodeRequest{RackId: n.GetRackId(), NodeId: n.GetNodeId(),
				UpdateInfo: &rmspb.NodeUpdateInfo{BmcEndpoint: n.BmcEndpoint, HostEndpoint: n.HostEndpoint}}
			resp, err := call(cmd.Context(), a, "UpdateNode", req, rmspb.RackManagerClient.UpdateNode)
			if err != nil {
				return err
			}
			return a.emitOperation("UpdateNode", resp, resp.GetResponse())
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "NodeInfo file (protobuf JSON) with rack_id, node_id and the new endpoints")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func (a *app) nodesDeleteCommand() *cobra.Command {
	var rack string
	cmd := &cobra.Command{
		Use:   "delete --rack RACK NODE_ID",
		Short: "Delete a registered node (DeleteNode)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := call(cmd.Context(), a, "DeleteNode", &rmspb.DeleteNodeRequest{RackId: rack, NodeId: args[0]}, rmspb.RackManagerClient.DeleteNode)
			if err != nil {
				return err
			}
			return a.emitOperation("DeleteNode", resp, resp.GetResponse())
		},
	}
	rackFlag(cmd, &rack)
	return cmd
}

// knownRack is nil when rmsd lists rack (ListRacks; a rack stays listed
// when its last node is deleted, as upstream's rack registry keeps it),
// else a not-found error: ListNodeInventory has no rack filter, so rmsctl
// tells an unknown rack from an empty one itself.
func (a *app) knownRack(ctx context.Context, rack string) error {
	resp, err := call(ctx, a, "ListRacks", &rmspb.ListRacksRequest{}, rmspb.RackManagerClient.ListRacks)
	if err != nil {
		return err
	}
	if slices.Contains(resp.GetRackIds(), rack) {
		return nil
	}
	return &exitError{code: ExitNotFound, err: fmt.Errorf("rack %s is unknown to rmsd (see rmsctl racks list)", printable(rack))}
}

// rackFlag adds the required --rack.
func rackFlag(cmd *cobra.Command, rack *string) {
	cmd.Flags().StringVar(rack, "rack", "", "rack id")
	_ = cmd.MarkFlagRequired("rack")
}
