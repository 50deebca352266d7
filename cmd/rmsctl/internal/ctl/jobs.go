package ctl

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// defaultWatchInterval is how often a watch polls GetJobStatus.
const defaultWatchInterval = time.Second

func (a *app) jobsCommand() *cobra.Command {
	jobs := &cobra.Command{Use: "jobs", Short: "List, follow and cancel jobs: firmware, switch images, cold reboots, switch administration"}
	jobs.AddCommand(a.jobsListCommand(), a.jobsGetCommand(), a.jobsChildrenCommand(), a.jobsWatchCommand(), a.jobsCancelCommand())
	return jobs
}

func (a *app) jobsGetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get JOB_ID",
		Short: "Show a job (GetJobStatus)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := call(cmd.Context(), a, "GetJobStatus", &rmspb.GetJobStatusRequest{JobId: args[0]}, rmspb.RackManagerClient.GetJobStatus)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) {
				t := jobsHeader(w)
				for _, j := range resp.GetJobStates() {
					jobRow(t, j)
				}
				t.flush()
				for _, j := range resp.GetJobStates() {
					if j.GetResultJson() != "" {
						io.WriteString(w, "result: "+j.GetResultJson()+"\n")
					}
				}
			})
		},
	}
}

func (a *app) jobsChildrenCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "children JOB_ID",
		Short: "Show a job's children (GetJobStatus with include_child_job_states)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := call(cmd.Context(), a, "GetJobStatus", &rmspb.GetJobStatusRequest{JobId: args[0], IncludeChildJobStates: true}, rmspb.RackManagerClient.GetJobStatus)
			if err != nil {
				return err
			}
			if len(resp.GetJobStates()) == 0 {
				return failed("GetJobStatus %s: empty reply", args[0])
			}
			return a.emit(resp, func(w io.Writer) {
				t := jobsHeader(w)
				for _, j := range resp.GetJobStates()[1:] {
					jobRow(t, j)
				}
				t.flush()
			})
		},
	}
}

func (a *app) jobsWatchCommand() *cobra.Command {
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "watch JOB_ID",
		Short: "Follow a job and its children until it ends; exit 0 when it completed, 1 when it failed",
		Long: `Poll GetJobStatus (with include_child_job_states) until the job ends. On a
terminal, draw one progress bar for the parent and one per child; otherwise
print one line per change of a job's state or description, as it comes. With
-o json, print the reply as one JSON line per change.

The parent's bar counts its finished children, except for a runbook job (a cold
reboot, a scale-up fabric reconcile), whose children only hold the nodes it
drives: its bar is the stage it reports ("stage 4/9: waiting for trays to
discharge"), and its children are shown only when one fails. Text beside a bar
is cut only where the terminal's width ends (80 columns when the terminal
reports no size and $COLUMNS is unset).
Exit 0 when the job completed, 1 when it failed, 3 when rmsd cannot be
reached, 4 when it does not know the job.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.watch(cmd.Context(), args[0], interval)
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", defaultWatchInterval, "poll interval")
	return cmd
}

func jobsHeader(w io.Writer) *table {
	return newTable(w, "JOB", "STATE", "RACK", "NODE", "DESCRIPTION", "ERROR", "UPDATED")
}

func jobRow(t *table, j *rmspb.JobStatus) {
	errText := j.GetErrorMessage()
	if j.GetErrorCode() != rmspb.JobError_JOB_ERROR_UNSPECIFIED {
		errText = j.GetErrorCode().String() + ": " + errText
	}
	t.row(j.GetJobId(), jobState(j.GetExecutionState()), j.GetRackId(), j.GetNodeId(), j.GetStateDescription(), errText, when(j.GetUpdatedAt()))
}
