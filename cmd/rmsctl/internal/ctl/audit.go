package ctl

import (
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/opspb"
)

func (a *app) auditCommand() *cobra.Command {
	audit := &cobra.Command{Use: "audit", Short: "Read the audit log: who called which mutating RPC, on what, and how it ended"}
	audit.AddCommand(a.auditListCommand())
	return audit
}

func (a *app) auditListCommand() *cobra.Command {
	var (
		rack, node string
		since      sinceFlag
		limit      int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List audit records, newest first (rmsd_ops.Ops/ListAuditRecords)",
		Long: `List the audit records rmsd keeps in its store, newest first: the time, the
caller (its client certificate's subject and SANs, else its address), the RPC,
the racks, nodes and jobs it named, and its outcome (OK, FAILURE with the
reason, or the gRPC code and message). --since takes an RFC 3339 time or a
duration before now (1h). With -o json, print one ListAuditRecordsResponse.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit <= 0 {
				return usageError("--limit %d: want a positive number", limit)
			}
			all := &opspb.ListAuditRecordsResponse{}
			req := &opspb.ListAuditRecordsRequest{RackId: rack, NodeId: node, Since: since.timestamp()}
			for {
				req.Limit = pageSize(limit - len(all.Records))
				resp, err := callOps(cmd.Context(), a, "ListAuditRecords", req, opspb.OpsClient.ListAuditRecords)
				if err != nil {
					return err
				}
				all.Records = append(all.Records, resp.GetRecords()...)
				all.NextPageToken = resp.GetNextPageToken()
				if all.NextPageToken == "" || len(all.Records) >= limit {
					break
				}
				req.PageToken = all.NextPageToken
			}
			return a.emit(all, func(w io.Writer) {
				t := newTable(w, "TIME", "CALLER", "RPC", "RACK", "NODE", "JOB", "OUTCOME", "REASON")
				for _, r := range all.GetRecords() {
					t.row(when(r.GetTime()), r.GetCaller().GetDisplay(), shortMethod(r.GetMethod()),
						idList(r.GetRackIds()), idList(r.GetNodeIds()), idList(r.GetJobIds()), r.GetOutcome(), r.GetReason())
				}
				t.flush()
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&rack, "rack", "", "only records whose request named this rack")
	f.StringVar(&node, "node", "", "only records whose request named this node")
	f.Var(&since, "since", "only records at or after this RFC 3339 time, or this long ago (1h)")
	f.IntVar(&limit, "limit", 100, "print at most this many records")
	return cmd
}

// idList joins ids for a table cell, summarising long lists.
func idList(ids []string) string {
	const most = 3
	if len(ids) <= most {
		return strings.Join(ids, ",")
	}
	return strings.Join(ids[:most], ",") + ",+" + strconv.Itoa(len(ids)-most)
}
