package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func (a *app) racksCommand() *cobra.Command {
	racks := &cobra.Command{Use: "racks", Short: "Racks registered with rmsd"}
	racks.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the rack ids (ListRacks)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := call(cmd.Context(), a, "ListRacks", &rmspb.ListRacksRequest{}, rmspb.RackManagerClient.ListRacks)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) {
				for _, id := range resp.GetRackIds() {
					fmt.Fprintln(w, printable(id))
				}
			})
		},
	})
	return racks
}
