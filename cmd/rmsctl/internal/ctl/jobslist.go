package ctl

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/opspb"
)

func (a *app) jobsListCommand() *cobra.Command {
	var (
		state, typ, rack string
		since            sinceFlag
		limit            int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the jobs rmsd tracks, newest first (rmsd_ops.Ops/ListJobs)",
		Long: `List the jobs rmsd's job registry tracks, running and finished (until their
retention ends), newest first. --state is queued, running, completed or failed;
--type a workflow type (firmware_update, switch_system_password_update,
cold_reboot_sequence, ...; "job" for batch children); --since an RFC 3339
time or a duration before now (1h), compared with the job's creation. With
-o json, print one ListJobsResponse.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit <= 0 {
				return usageError("--limit %d: want a positive number", limit)
			}
			all := &opspb.ListJobsResponse{}
			req := &opspb.ListJobsRequest{State: state, Type: typ, RackId: rack, Since: since.timestamp()}
			for {
				req.Limit = pageSize(limit - len(all.Jobs))
				resp, err := callOps(cmd.Context(), a, "ListJobs", req, opspb.OpsClient.ListJobs)
				if err != nil {
					return err
				}
				all.Jobs = append(all.Jobs, resp.GetJobs()...)
				all.NextPageToken = resp.GetNextPageToken()
				if all.NextPageToken == "" || len(all.Jobs) >= limit {
					break
				}
				req.PageToken = all.NextPageToken
			}
			return a.emit(all, func(w io.Writer) {
				t := newTable(w, "JOB", "TYPE", "STATE", "RACK", "NODE", "PARENT", "CHILDREN", "DESCRIPTION", "CREATED", "UPDATED")
				for _, j := range all.GetJobs() {
					children := ""
					if j.GetChildCount() > 0 {
						children = strconv.Itoa(int(j.GetChildCount()))
					}
					t.row(j.GetJobId(), j.GetType(), j.GetState(), j.GetRackId(), j.GetNodeId(), j.GetParentJobId(), children,
						j.GetDescription(), when(j.GetCreatedAt()), when(j.GetUpdatedAt()))
				}
				t.flush()
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&state, "state", "", "only jobs in this state: queued, running, completed or failed")
	f.StringVar(&typ, "type", "", "only jobs of this workflow type (firmware_update, cold_reboot_sequence, ...)")
	f.StringVar(&rack, "rack", "", "only jobs on this rack")
	f.Var(&since, "since", "only jobs created at or after this RFC 3339 time, or this long ago (1h)")
	f.IntVar(&limit, "limit", 100, "print at most this many jobs")
	return cmd
}
