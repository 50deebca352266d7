package ctl

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// powerStates are the --state values of `power set`.
var powerStates = map[string]rmspb.PowerOperation{
	"on":                rmspb.PowerOperation_POWER_OPERATION_ON,
	"off":               rmspb.PowerOperation_POWER_OPERATION_OFF,
	"force-on":          rmspb.PowerOperation_POWER_OPERATION_FORCE_ON,
	"force-off":         rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF,
	"graceful-shutdown": rmspb.PowerOperation_POWER_OPERATION_GRACEFUL_SHUTDOWN,
	"graceful-restart":  rmspb.PowerOperation_POWER_OPERATION_GRACEFUL_RESTART,
	"force-restart":     rmspb.PowerOperation_POWER_OPERATION_FORCE_RESTART,
	"power-cycle":       rmspb.PowerOperation_POWER_OPERATION_RESET,
	"reset":             rmspb.PowerOperation_POWER_OPERATION_RESET,
}

func powerStateNames() string {
	names := make([]string, 0, len(powerStates))
	for n := range powerStates {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (a *app) powerCommand() *cobra.Command {
	power := &cobra.Command{Use: "power", Short: "Read and change node power"}
	power.AddCommand(a.powerGetCommand(), a.powerSetCommand())
	return power
}

// nodeSelection is the two ways the power commands name nodes: registered
// nodes of one rack by id (one RPC per node), or a NodeSet file (one batch
// RPC with the file's endpoints and credentials).
type nodeSelection struct {
	rack, file string
}

func (s *nodeSelection) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.rack, "rack", "", "rack of the registered nodes NODE_ID...")
	cmd.Flags().StringVarP(&s.file, "file", "f", "", "NodeSet file (protobuf JSON): its nodes (those named, when NODE_IDs are given) in one batch")
	cmd.MarkFlagsMutuallyExclusive("rack", "file")
	cmd.MarkFlagsOneRequired("rack", "file")
}

// batch is the nodes of -f, nil with --rack.
func (s *nodeSelection) batch(ids []string) (*rmspb.NodeSet, error) {
	if s.file == "" {
		if len(ids) == 0 {
			return nil, usageError("name at least one NODE_ID of rack %s", s.rack)
		}
		return nil, nil
	}
	set, err := readNodeSet("-f", s.file)
	if err != nil {
		return nil, err
	}
	return selectNodes(set, s.file, "", ids)
}

func (a *app) powerGetCommand() *cobra.Command {
	var sel nodeSelection
	cmd := &cobra.Command{
		Use:   "get (--rack RACK NODE_ID... | -f NODESET.json [NODE_ID...])",
		Short: "Read power states (GetPowerState per registered node, or BatchGetPowerState)",
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := sel.batch(args)
			if err != nil {
				return err
			}
			if set != nil {
				resp, err := call(cmd.Context(), a, "BatchGetPowerState", &rmspb.BatchGetPowerStateRequest{Nodes: set}, rmspb.RackManagerClient.BatchGetPowerState)
				if err != nil {
					return err
				}
				if err := a.emit(resp, func(w io.Writer) {
					states := map[string]string{}
					for _, s := range resp.GetNodePowerStates() {
						states[s.GetNodeId()] = s.GetPstate()
					}
					t := newTable(w, "NODE", "POWER", "RESULT")
					for _, r := range resp.GetResponse().GetNodeResults() {
						t.row(r.GetNodeId(), states[r.GetNodeId()], resultText(r))
					}
					t.flush()
					fmt.Fprintln(w, resp.GetResponse().GetMessage())
				}); err != nil {
					return err
				}
				return inBand("BatchGetPowerState", resp.GetResponse().GetStatus(), resp.GetResponse().GetMessage())
			}
			reasons := map[string]string{}
			return perNode(a, args, []string{"NODE", "POWER", "RESULT"},
				func(id string) (*rmspb.GetPowerStateResponse, error) {
					resp, reason, err := callReason(cmd.Context(), a, "GetPowerState", &rmspb.GetPowerStateRequest{RackId: sel.rack, NodeId: id}, rmspb.RackManagerClient.GetPowerState)
					reasons[id] = reason
					return resp, err
				},
				func(id string, r *rmspb.GetPowerStateResponse) [][]string {
					return [][]string{{id, r.GetPstate(), resultWithReason(r.GetStatus(), reasons[id])}}
				},
				func(id string, r *rmspb.GetPowerStateResponse) error {
					return inBand("GetPowerState "+id, r.GetStatus(), orReason(reasons[id], "power state of "+id+" could not be read"))
				})
		},
	}
	sel.flags(cmd)
	return cmd
}

func (a *app) powerSetCommand() *cobra.Command {
	var sel nodeSelection
	var state string
	cmd := &cobra.Command{
		Use:   "set --state STATE (--rack RACK NODE_ID... | -f NODESET.json [NODE_ID...])",
		Short: "Change power states (SetPowerState per registered node, one at a time, or BatchSetPowerState)",
		RunE: func(cmd *cobra.Command, args []string) error {
			op, ok := powerStates[strings.ToLower(state)]
			if !ok {
				return usageError("--state %q: want one of %s", state, powerStateNames())
			}
			set, err := sel.batch(args)
			if err != nil {
				return err
			}
			if set != nil {
				resp, err := call(cmd.Context(), a, "BatchSetPowerState", &rmspb.BatchSetPowerStateRequest{Nodes: set, Operation: op}, rmspb.RackManagerClient.BatchSetPowerState)
				if err != nil {
					return err
				}
				if err := a.emit(resp, func(w io.Writer) { batchSummary(w, resp.GetResponse()) }); err != nil {
					return err
				}
				return inBand("BatchSetPowerState", resp.GetResponse().GetStatus(), resp.GetResponse().GetMessage())
			}
			// SetPowerState leases the whole rack, so the nodes go one
			// after the other.
			var errs []error
			for _, id := range args {
				resp, reason, err := callReason(cmd.Context(), a, "SetPowerState", &rmspb.SetPowerStateRequest{RackId: sel.rack, NodeId: id, Operation: op}, rmspb.RackManagerClient.SetPowerState)
				if err != nil {
					return firstFailure(append(errs, err))
				}
				if err := a.emit(resp, func(w io.Writer) {
					fmt.Fprintf(w, "%s %s: %s\n", id, state, resultWithReason(resp.GetStatus(), reason))
				}); err != nil {
					return err
				}
				errs = append(errs, inBand("SetPowerState "+id, resp.GetStatus(), orReason(reason, "power "+state+" of "+id+" failed (see rmsd's log)")))
			}
			return firstFailure(errs)
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "target state: "+powerStateNames())
	_ = cmd.MarkFlagRequired("state")
	sel.flags(cmd)
	return cmd
}

// resultText is one node's batch result: OK, or its error.
func resultText(r *rmspb.NodeOperationResult) string {
	if r.GetStatus() == rmspb.ReturnCode_RETURN_CODE_FAILURE {
		return "FAILURE: " + r.GetErrorMessage()
	}
	return code(r.GetStatus())
}
