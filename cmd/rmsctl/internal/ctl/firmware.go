package ctl

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func (a *app) firmwareCommand() *cobra.Command {
	fw := &cobra.Command{Use: "firmware", Short: "Firmware inventory, the firmware catalog, applies and comparisons"}
	fw.AddCommand(a.firmwareInventoryCommand(), a.firmwareObjectsCommand(), a.firmwareApplyCommand(), a.firmwareCompareCommand())
	return fw
}

func (a *app) firmwareInventoryCommand() *cobra.Command {
	var rack string
	cmd := &cobra.Command{
		Use:   "inventory --rack RACK [NODE_ID...]",
		Short: "Firmware inventory of a rack's registered nodes (GetRackFirmwareInventory, or GetNodeFirmwareInventory per node)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				resp, reason, err := callReason(cmd.Context(), a, "GetRackFirmwareInventory", &rmspb.GetRackFirmwareInventoryRequest{RackId: rack}, rmspb.RackManagerClient.GetRackFirmwareInventory)
				if err != nil {
					return err
				}
				if err := a.emit(resp, func(w io.Writer) {
					t := newTable(w, "NODE", "NAME", "VERSION", "TARGET", "UPDATEABLE", "HEALTH")
					for _, n := range resp.GetNodes() {
						for _, f := range n.GetFirmwareList() {
							t.row(n.GetNodeId(), f.GetName(), f.GetVersion(), f.GetTarget(), yesNo(f.GetUpdateable()), f.GetHealth())
						}
					}
					t.flush()
				}); err != nil {
					return err
				}
				return inBand("GetRackFirmwareInventory", resp.GetStatus(), orReason(reason, "rack "+rack+": not every node could be read (see rmsd's log)"))
			}
			reasons := map[string]string{}
			return perNode(a, args, []string{"NODE", "NAME", "VERSION", "TARGET", "UPDATEABLE", "HEALTH"},
				func(id string) (*rmspb.GetNodeFirmwareInventoryResponse, error) {
					resp, reason, err := callReason(cmd.Context(), a, "GetNodeFirmwareInventory", &rmspb.GetNodeFirmwareInventoryRequest{RackId: rack, NodeId: id}, rmspb.RackManagerClient.GetNodeFirmwareInventory)
					reasons[id] = reason
					return resp, err
				},
				func(id string, r *rmspb.GetNodeFirmwareInventoryResponse) [][]string {
					var rows [][]string
					for _, f := range r.GetFirmwareList() {
						rows = append(rows, []string{id, f.GetName(), f.GetVersion(), f.GetTarget(), yesNo(f.GetUpdateable()), f.GetHealth()})
					}
					return rows
				},
				func(id string, r *rmspb.GetNodeFirmwareInventoryResponse) error {
					return inBand("GetNodeFirmwareInventory "+id, r.GetStatus(), orReason(reasons[id], "node "+id+" could not be read (see rmsd's log)"))
				})
		},
	}
	rackFlag(cmd, &rack)
	return cmd
}

// componentFilters is --components NODE_TYPE=NAME,NAME (repeatable): the
// component_filters of an apply or comparison.
type componentFilters []string

func (c componentFilters) proto() (map[int32]*rmspb.FirmwareObjectComponentFilter, error) {
	if len(c) == 0 {
		return nil, nil
	}
	out := map[int32]*rmspb.FirmwareObjectComponentFilter{}
	for _, f := range c {
		typ, names, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(names) == "" {
			return nil, usageError("--components %q: want NODE_TYPE=COMPONENT[,COMPONENT...]", f)
		}
		t, err := parseNodeType(typ)
		if err != nil {
			return nil, err
		}
		filter := out[int32(t)]
		if filter == nil {
			filter = &rmspb.FirmwareObjectComponentFilter{}
			out[int32(t)] = filter
		}
		for _, n := range strings.Split(names, ",") {
			if n = strings.TrimSpace(n); n != "" {
				filter.Components = append(filter.Components, n)
			}
		}
	}
	return out, nil
}

func (a *app) firmwareApplyCommand() *cobra.Command {
	var rack, object, hardwareType, channel string
	var filters []string
	var force bool
	var w watchFlags
	cmd := &cobra.Command{
		Use:   "apply [--object OBJECT_ID] --rack RACK [NODE_ID...] [--watch]",
		Short: "Apply an available firmware object to nodes of a rack (ApplyStoredFirmwareObject)",
		Long: `Apply an available firmware object (--object, else the default object of
--hardware-type) to the nodes of RACK in the nodes file (all of them, or those
named): one parent job, one child per node. With --watch, follow the parent as
"rmsctl jobs watch" does, and exit with its result.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if object == "" && hardwareType == "" {
				return usageError("name the firmware object with --object, or --hardware-type to apply its default object")
			}
			fil, err := componentFilters(filters).proto()
			if err != nil {
				return err
			}
			nodes, err := a.suppliedNodes(rack, args)
			if err != nil {
				return err
			}
			req := &rmspb.ApplyStoredFirmwareObjectRequest{RackId: rack, ObjectId: object, HardwareType: hardwareType,
				FirmwareType: channel, Nodes: nodes, ForceUpdate: force, ComponentFilters: fil}
			resp, err := call(cmd.Context(), a, "ApplyStoredFirmwareObject", req, rmspb.RackManagerClient.ApplyStoredFirmwareObject)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) {
				if resp.GetObjectId() != "" {
					fmt.Fprintf(w, "firmware object %s\n", resp.GetObjectId())
				}
				batchSummary(w, resp.GetResponse())
				jobsTable(w, resp.GetJobs())
			}); err != nil {
				return err
			}
			return a.afterStart(cmd, w, "ApplyStoredFirmwareObject", resp.GetResponse())
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVar(&object, "object", "", "firmware object id (default: the default object of --hardware-type)")
	cmd.Flags().StringVar(&hardwareType, "hardware-type", "", "hardware type whose default object is applied, e.g. gb200-nvl")
	cmd.Flags().StringVar(&channel, "firmware-type", "", "package channel of the manifest (empty: prod)")
	cmd.Flags().StringArrayVar(&filters, "components", nil, "only these components for a node type: NODE_TYPE=NAME[,NAME...] (repeatable)")
	cmd.Flags().BoolVar(&force, "force", false, "flash even components already at the manifest's version")
	a.nodesFlag(cmd)
	w.flags(cmd)
	return cmd
}

func (a *app) firmwareCompareCommand() *cobra.Command {
	var rack, file, channel string
	var filters []string
	cmd := &cobra.Command{
		Use:   "compare -f MANIFEST.json --rack RACK NODE_ID...",
		Short: "Compare nodes' firmware with a manifest (CompareFirmwareObject); nothing is stored or changed",
		Long: `Compare the live firmware of nodes of RACK in the nodes file with a manifest
(the manifest itself, or an AddFirmwareObjectRequest file such as
simulated-release.json). Exits 1 when a node differs or cannot be read.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			manifest, err := readManifest(file)
			if err != nil {
				return err
			}
			fil, err := componentFilters(filters).proto()
			if err != nil {
				return err
			}
			nodes, err := a.suppliedNodes(rack, args)
			if err != nil {
				return err
			}
			req := &rmspb.CompareFirmwareObjectRequest{ConfigJson: manifest.GetConfigJson(), FirmwareType: channel, Nodes: nodes, ComponentFilters: fil}
			resp, err := call(cmd.Context(), a, "CompareFirmwareObject", req, rmspb.RackManagerClient.CompareFirmwareObject)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) {
				t := newTable(w, "NODE", "COMPONENT", "INSTALLED", "PROPOSED", "STATUS", "REASON")
				for _, n := range resp.GetNodes() {
					for _, c := range n.GetComponents() {
						t.row(n.GetNodeId(), c.GetComponent(), c.GetInstalledVersion(), c.GetProposedVersion(),
							strings.TrimPrefix(c.GetStatus().String(), "FIRMWARE_COMPARISON_STATUS_"), c.GetReason())
					}
				}
				t.flush()
				fmt.Fprintln(w, resp.GetResponse().GetMessage())
			}); err != nil {
				return err
			}
			if err := inBand("CompareFirmwareObject", resp.GetResponse().GetStatus(), resp.GetResponse().GetMessage()); err != nil {
				return err
			}
			if !resp.GetMatchesManifest() {
				return failed("firmware differs from %s: %s", resp.GetObjectId(), resp.GetResponse().GetMessage())
			}
			return nil
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVarP(&file, "file", "f", "", "manifest file, or an AddFirmwareObjectRequest in protobuf JSON")
	_ = cmd.MarkFlagRequired("file")
	cmd.Flags().StringVar(&channel, "firmware-type", "", "package channel of the manifest (empty: prod)")
	cmd.Flags().StringArrayVar(&filters, "components", nil, "only these components for a node type: NODE_TYPE=NAME[,NAME...] (repeatable)")
	a.nodesFlag(cmd)
	return cmd
}

// jobInfo is a started child job of a batch: NodeFirmwareJobInfo and
// SwitchSystemImageUpdateJobInfo.
type jobInfo interface {
	GetNodeId() string
	GetJobId() string
}

func jobsTable[J jobInfo](w io.Writer, jobs []J) {
	if len(jobs) == 0 {
		return
	}
	t := newTable(w, "NODE", "JOB")
	for _, j := range jobs {
		t.row(j.GetNodeId(), j.GetJobId())
	}
	t.flush()
}

// watchFlags are --watch and its poll interval, on the commands that
// start a job.
type watchFlags struct {
	watch    bool
	interval time.Duration
}

func (w *watchFlags) flags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&w.watch, "watch", false, "follow the started job until it ends, as `rmsctl jobs watch` does")
	cmd.Flags().DurationVar(&w.interval, "interval", defaultWatchInterval, "poll interval of --watch")
}

// afterStart ends a command that started a batch: with --watch it follows
// the parent job and exits as the watch does (and 1 anyway when some node
// was refused); without, an in-band FAILURE is the error.
func (a *app) afterStart(cmd *cobra.Command, w watchFlags, rpc string, r *rmspb.NodeBatchResponse) error {
	refused := inBand(rpc, r.GetStatus(), r.GetMessage())
	if !w.watch || r.GetJobId() == "" {
		return refused
	}
	if err := a.watch(cmd.Context(), r.GetJobId(), w.interval); err != nil {
		return err
	}
	return refused
}
