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
			resp, err := call(cmd.Context(), a, "GetVersion", &rmspb.GetVersionRequest{}, rmspb.RackManagerClient.GetVersion)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) {
				fmt.Fprintf(w, "rmsctl %s\nrmsd   %s at %s\n", buildinfo.Version(), resp.GetVersion(), a.target.String())
			})
		},
	}
}
