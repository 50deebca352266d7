package ctl

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func (a *app) deviceInfoCommand() *cobra.Command {
	di := &cobra.Command{Use: "device-info", Short: "Tray topology of registered nodes: chassis, slot, tray"}
	di.AddCommand(a.deviceInfoGetCommand(), a.deviceInfoListCommand())
	return di
}

func (a *app) deviceInfoGetCommand() *cobra.Command {
	var rack string
	cmd := &cobra.Command{
		Use:   "get --rack RACK NODE_ID...",
		Short: "Device info of registered nodes (GetNodeDeviceInfo per node)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return perNode(a, args, []string{"NODE", "CHASSIS_SN", "SLOT", "TRAY", "RESULT"},
				func(id string) (*rmspb.GetNodeDeviceInfoResponse, error) {
					return call(cmd.Context(), a, "GetNodeDeviceInfo", &rmspb.GetNodeDeviceInfoRequest{RackId: rack, NodeId: id}, rmspb.RackManagerClient.GetNodeDeviceInfo)
				},
				func(id string, r *rmspb.GetNodeDeviceInfoResponse) [][]string {
					cells := append([]string{id}, deviceCells(r.GetDeviceInfo())...)
					return [][]string{append(cells, code(r.GetStatus())+": "+r.GetMessage())}
				},
				func(id string, r *rmspb.GetNodeDeviceInfoResponse) error {
					return inBand("GetNodeDeviceInfo "+id, r.GetStatus(), r.GetMessage())
				})
		},
	}
	rackFlag(cmd, &rack)
	return cmd
}

func (a *app) deviceInfoListCommand() *cobra.Command {
	var rack, typ string
	cmd := &cobra.Command{
		Use:   "list --rack RACK --type NODE_TYPE",
		Short: "Device info of a rack's registered nodes of one type (ListNodeDeviceInfoByNodeType)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := parseNodeType(typ)
			if err != nil {
				return err
			}
			resp, err := call(cmd.Context(), a, "ListNodeDeviceInfoByNodeType",
				&rmspb.ListNodeDeviceInfoByNodeTypeRequest{RackId: rack, NodeType: t}, rmspb.RackManagerClient.ListNodeDeviceInfoByNodeType)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) {
				tab := newTable(w, "NODE", "CHASSIS_SN", "SLOT", "TRAY")
				for _, d := range resp.GetNodeDeviceDetails() {
					tab.row(append([]string{d.GetNodeId()}, deviceCells(d)...)...)
				}
				tab.flush()
				fmt.Fprintf(w, "%s: %s\n", code(resp.GetStatus()), resp.GetMessage())
			}); err != nil {
				return err
			}
			return inBand("ListNodeDeviceInfoByNodeType", resp.GetStatus(), resp.GetMessage())
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVar(&typ, "type", "", "node type, e.g. COMPUTE_GB200_NVIDIA (case and -/_ do not matter) or its number")
	_ = cmd.MarkFlagRequired("type")
	return cmd
}

func deviceCells(d *rmspb.NodeDeviceInfo) []string {
	cells := []string{"", "", ""}
	if d.ChassisSn != nil {
		cells[0] = strconv.FormatInt(d.GetChassisSn(), 10)
	}
	if d.SlotNumber != nil {
		cells[1] = strconv.FormatUint(uint64(d.GetSlotNumber()), 10)
	}
	if d.TrayIndex != nil {
		cells[2] = strconv.FormatUint(uint64(d.GetTrayIndex()), 10)
	}
	return cells
}

// parseNodeType reads a NodeType by enum name (any case, - or _) or number.
func parseNodeType(s string) (rmspb.NodeType, error) {
	name := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if v, ok := rmspb.NodeType_value[name]; ok && v != 0 {
		return rmspb.NodeType(v), nil
	}
	if n, err := strconv.Atoi(name); err == nil {
		if _, ok := rmspb.NodeType_name[int32(n)]; ok && n != 0 {
			return rmspb.NodeType(n), nil
		}
	}
	var names []string
	for v := int32(1); ; v++ {
		n, ok := rmspb.NodeType_name[v]
		if !ok {
			break
		}
		names = append(names, n)
	}
	return 0, usageError("node type %q: want one of %s", s, strings.Join(names, ", "))
}
