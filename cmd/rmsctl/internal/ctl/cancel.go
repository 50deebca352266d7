package ctl

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/adminpb"
)

// defaultAdminAddr is where rmsd's admin service listens by default
// ([admin] bind_address and port).
const defaultAdminAddr = "127.0.0.1:8803"

func (a *app) jobsCancelCommand() *cobra.Command {
	var adminAddr string
	cmd := &cobra.Command{
		Use:   "cancel JOB_ID",
		Short: "Cancel a job, or a batch parent and every child still running (admin CancelJob)",
		Long: `Cancel a job through rmsd's admin service (rmsd_admin.Admin/CancelJob): a leaf
job's workflow, or every child of a batch parent that has not ended. Each
workflow stops at its next safe point and records its own terminal state,
failed "cancelled by operator"; its nodes stay held until then, so follow the
job with "jobs watch". The admin service listens only on a loopback address
and only with [admin] enabled: run rmsctl on rmsd's host, with --admin-addr
when [admin] port is not the default.
Exit 0 when the cancel was delivered, 4 when rmsd does not know the job, 5
when the job has already ended, 3 when the admin service cannot be reached.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.cancelJob(cmd.Context(), adminAddr, args[0])
		},
	}
	cmd.Flags().StringVar(&adminAddr, "admin-addr", defaultAdminAddr, "host:port of rmsd's admin service (loopback, plaintext)")
	return cmd
}

// cancelJob calls the admin service's CancelJob on id and prints how many
// workflows were told to stop.
func (a *app) cancelJob(ctx context.Context, adminAddr, id string) error {
	const rpc = "CancelJob"
	conn, err := grpc.NewClient(adminAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return usageError("--admin-addr %q: %w", adminAddr, err)
	}
	defer conn.Close()
	rctx, cancel := a.rpcContext(ctx)
	defer cancel()
	resp, err := adminpb.NewAdminClient(conn).CancelJob(rctx, &adminpb.CancelJobRequest{JobId: id})
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("%s: interrupted", rpc)}
		}
		if c := status.Code(err); c == codes.Unavailable || c == codes.DeadlineExceeded {
			return &exitError{code: ExitUnreachable,
				err: fmt.Errorf("%s: rmsd's admin service at %s unreachable (%s): %s", rpc, adminAddr, c, status.Convert(err).Message())}
		}
		return rpcError(a, rpc, err)
	}
	return a.emit(resp, func(w io.Writer) {
		fmt.Fprintf(w, "job %s: %d workflow(s) told to stop; its nodes stay held until each has ended\n", id, resp.GetSignalled())
	})
}
