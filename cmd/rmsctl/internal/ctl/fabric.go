package ctl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

func (a *app) fabricCommand() *cobra.Command {
	fabric := &cobra.Command{Use: "fabric", Short: "The NVLink scale-up fabric of a rack: reconcile it, read its status"}
	fabric.AddCommand(a.fabricConfigureCommand(), a.fabricStatusCommand())
	return fabric
}

// switchNodes are the switches of rack in the nodes file: those named by
// ids, else every switch tray of the rack.
func (a *app) switchNodes(rack string, ids []string) (*rmspb.NodeSet, error) {
	set, err := a.suppliedNodes(rack, ids)
	if err != nil || len(ids) > 0 {
		return set, err
	}
	out := &rmspb.NodeSet{}
	for _, n := range set.GetNodes() {
		if strings.HasPrefix(n.GetType().String(), "SWITCH_") {
			out.Nodes = append(out.Nodes, n)
		}
	}
	if len(out.Nodes) == 0 {
		return nil, usageError("the nodes file has no switch tray in rack %s", rack)
	}
	return out, nil
}

// staticConfigs is --static FILE:KEY=VALUE (repeatable): extra entries of
// the primary's static configuration files.
type staticConfigs []string

func (s staticConfigs) proto() ([]*rmspb.ScaleUpFabricStaticConfig, error) {
	var out []*rmspb.ScaleUpFabricStaticConfig
	for _, e := range s {
		file, kv, ok1 := strings.Cut(e, ":")
		key, value, ok2 := strings.Cut(kv, "=")
		if !ok1 || !ok2 || file == "" || key == "" {
			return nil, usageError("--static %q: want FILE:KEY=VALUE, e.g. fm_config:LOG_LEVEL=3", e)
		}
		out = append(out, &rmspb.ScaleUpFabricStaticConfig{ConfigFileName: file, Key: key, Value: value})
	}
	return out, nil
}

func (a *app) fabricConfigureCommand() *cobra.Command {
	var rack, topology, primary, domain string
	var static []string
	var w watchFlags
	cmd := &cobra.Command{
		Use:   "configure --rack RACK --topology TOPOLOGY [NODE_ID...] [--watch]",
		Short: "Reconcile a rack's scale-up fabric to a topology, as a job (RackManagerV2/ConfigureScaleUpFabricManager)",
		Long: `Make the scale-up fabric of RACK what is asked: one primary switch running the
fabric manager (NMX-C) on TOPOLOGY with the --static entries, every other switch's
cluster disabled. The switches are those of RACK in the nodes file (every switch
tray, or those named); give all of the rack's switch trays. The reconcile is one
job on the rack; it changes only what differs and rolls its changes back when it
fails. With --watch, follow it as "rmsctl jobs watch" does, its step
("stage 3/13: ...") as the bar, and exit with its result; "rmsctl fabric status"
reads the outcome. Exit 5 when rmsd rejects the request (a bad topology or
entry, a node that is not a switch, another job holding the rack or a switch).`,
		Example: `  rmsctl fabric configure --rack rack-001 --topology gb200_nvl72r1_c2g4_topology --watch
  rmsctl fabric configure --rack rack-001 --topology gb200_nvl72r1_c2g4_topology --static fm_config:LOG_LEVEL=3 --primary rack-001-switch-01`,
		RunE: func(cmd *cobra.Command, args []string) error {
			entries, err := staticConfigs(static).proto()
			if err != nil {
				return err
			}
			nodes, err := a.switchNodes(rack, args)
			if err != nil {
				return err
			}
			req := &rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: nodes,
				Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: topology, ExtraStaticConfigs: entries}}
			if primary != "" {
				req.PrimarySwitchNodeId = &primary
			}
			if domain != "" {
				req.Domain = &domain
			}
			var resp *rmspbv2.ConfigureScaleUpFabricManagerResponse
			if err := a.invokeV2(cmd.Context(), "ConfigureScaleUpFabricManager", func(ctx context.Context, c rmspbv2.RackManagerV2Client) (err error) {
				resp, err = c.ConfigureScaleUpFabricManager(ctx, req)
				return err
			}); err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) {
				fmt.Fprintf(w, "scale-up fabric reconcile of rack %s started: job %s\n", rack, resp.GetJobId())
			}); err != nil {
				return err
			}
			if !w.watch {
				return nil
			}
			return a.watch(cmd.Context(), resp.GetJobId(), w.interval)
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVar(&topology, "topology", "", "fabric topology, e.g. gb200_nvl72r1_c2g4_topology")
	_ = cmd.MarkFlagRequired("topology")
	cmd.Flags().StringVar(&primary, "primary", "", "the switch to run the fabric manager on (default: rmsd elects one)")
	cmd.Flags().StringArrayVar(&static, "static", nil, "static configuration entry FILE:KEY=VALUE, e.g. fm_config:LOG_LEVEL=3 (repeatable)")
	cmd.Flags().StringVar(&domain, "domain", "", "management domain of the switches (optional)")
	a.nodesFlag(cmd)
	w.flags(cmd)
	return cmd
}

func (a *app) fabricStatusCommand() *cobra.Command {
	var rack, domain string
	cmd := &cobra.Command{
		Use:   "status --rack RACK [NODE_ID...]",
		Short: "Read the scale-up fabric of a rack's switches (GetScaleUpFabricStatus); nothing is changed",
		Long: `Read each switch of RACK in the nodes file (every switch tray, or those named):
whether its fabric cluster is enabled and the status of its fabric manager app;
then the topology from the one enabled switch, the primary. Exit 1 when no
switch could be read, several are enabled, or the primary's fabric manager
cannot be read; a single switch that fails is only in its row.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			nodes, err := a.switchNodes(rack, args)
			if err != nil {
				return err
			}
			req := &rmspb.GetScaleUpFabricStatusRequest{Nodes: nodes}
			if domain != "" {
				req.Domain = &domain
			}
			resp, err := call(cmd.Context(), a, "GetScaleUpFabricStatus", req, rmspb.RackManagerClient.GetScaleUpFabricStatus)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) { fabricStatusText(w, resp) }); err != nil {
				return err
			}
			return inBand("GetScaleUpFabricStatus", resp.GetStatus(), resp.GetErrorMessage())
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVar(&domain, "domain", "", "management domain of the switches (optional)")
	a.nodesFlag(cmd)
	return cmd
}

// fabricStatusText prints a fabric status: the primary and its topology,
// then one row per switch.
func fabricStatusText(w io.Writer, resp *rmspb.GetScaleUpFabricStatusResponse) {
	st := resp.GetFabricStatus()
	var enabled []string
	for _, s := range st.GetSwitches() {
		if s.GetEnabled() {
			enabled = append(enabled, s.GetNodeId())
		}
	}
	primary := "none"
	switch len(enabled) {
	case 0:
	case 1:
		primary = enabled[0]
	default:
		primary = "several enabled: " + strings.Join(enabled, ", ")
	}
	topology := st.GetTopologyType()
	if topology == "" {
		topology = "-"
	}
	fmt.Fprintf(w, "primary:  %s\ntopology: %s\n", primary, topology)
	for _, e := range st.GetExtraStaticConfigs() {
		fmt.Fprintf(w, "static:   %s:%s=%s\n", e.GetConfigFileName(), e.GetKey(), e.GetValue())
	}
	t := newTable(w, "SWITCH", "CLUSTER", "FABRIC-MANAGER", "ERROR")
	for _, s := range st.GetSwitches() {
		cluster := "disabled"
		if s.GetEnabled() {
			cluster = "enabled"
		}
		if s.GetErrorMessage() != "" {
			cluster = "unknown"
		}
		t.row(s.GetNodeId(), cluster, s.GetFabricManagerStatus(), s.GetErrorMessage())
	}
	t.flush()
	if resp.GetStatus() == rmspb.ReturnCode_RETURN_CODE_FAILURE && resp.GetErrorMessage() != "" {
		fmt.Fprintf(w, "FAILURE: %s\n", resp.GetErrorMessage())
	}
}

// invokeV2 is invoke for an RPC of rack_manager_v2.RackManagerV2, on the
// same connection.
func (a *app) invokeV2(ctx context.Context, rpc string, do func(context.Context, rmspbv2.RackManagerV2Client) error) error {
	return a.invoke(ctx, rpc, func(rctx context.Context, _ rmspb.RackManagerClient) error {
		return do(rctx, rmspbv2.NewRackManagerV2Client(a.conn))
	})
}
