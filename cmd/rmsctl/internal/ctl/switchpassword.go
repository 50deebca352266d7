package ctl

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func (a *app) switchPasswordCommand() *cobra.Command {
	var rack, user string
	var secret secretSource
	var w watchFlags
	cmd := &cobra.Command{
		Use:   "password --rack RACK --user USER (--password-file FILE | --password-stdin) NODE_ID... [--watch]",
		Short: "Change an NVOS user's password on switches of a rack (UpdateSwitchSystemPassword)",
		Long: `Change the password of USER on each named switch of RACK in the nodes file: one
parent job, one child per switch. The switch's login in the nodes file is the
current one; when USER is that login, update the nodes file (and rmsd's
registered nodes) to the new password afterwards.

The new password is never a flag value, which anyone on the host could read in
the process list: it is the first line of --password-file, the first line of
standard input with --password-stdin, or, when standard input is a terminal and
neither is given, typed twice at a prompt that does not echo. rmsctl never
prints it, and -o json prints only rmsd's reply, which does not carry it.
With --watch, follow the parent as "rmsctl jobs watch" does.`,
		Example: `  rmsctl switch password --rack rack-001 --user ops --password-file ./ops.pw rack-001-switch-01
  pass show nvos/ops | rmsctl switch password --rack rack-001 --user ops --password-stdin rack-001-switch-01 --watch`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			nodes, err := a.suppliedNodes(rack, args)
			if err != nil {
				return err
			}
			password, err := secret.read(cmd.Context(), a.streams, "password")
			if err != nil {
				return err
			}
			req := &rmspb.UpdateSwitchSystemPasswordRequest{Nodes: nodes, Username: user, Password: password}
			resp, err := call(cmd.Context(), a, "UpdateSwitchSystemPassword", req, rmspb.RackManagerClient.UpdateSwitchSystemPassword)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) { batchSummary(w, resp.GetResponse()) }); err != nil {
				return err
			}
			return a.afterStart(cmd, w, "UpdateSwitchSystemPassword", resp.GetResponse())
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVar(&user, "user", "", "the NVOS user whose password changes (ASCII letters and digits)")
	_ = cmd.MarkFlagRequired("user")
	cmd.Flags().StringVar(&secret.file, "password-file", "", "file whose first line is the new password (never a password on the command line)")
	cmd.Flags().BoolVar(&secret.stdin, "password-stdin", false, "read the new password from the first line of standard input")
	cmd.MarkFlagsMutuallyExclusive("password-file", "password-stdin")
	a.nodesFlag(cmd)
	w.flags(cmd)
	return cmd
}
