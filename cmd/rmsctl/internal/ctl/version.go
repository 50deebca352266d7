package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print rmsctl's version and rmsd's (GetVersion)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.output == "text" {
				fmt.Fprintf(a.streams.Out, "rmsctl %s\n", buildinfo.Version())
			}
			resp, err := call(cmd.Context(), a, "GetVersion", &rmspb.GetVersionRequest{}, rmspb.RackManagerClient.GetVersion)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) {
				fmt.Fprintf(w, "rmsd   %s at %s\n", resp.GetVersion(), a.target.String())
			})
		},
	}
}
