package opsserver

import (
	"context"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/store"
)

// auditTokenPrefix marks an audit page token: the seq of the page's last
// record, which the next page starts below.
const auditTokenPrefix = "audit:"

// ListAuditRecords implements opspb.OpsServer.
func (s *Service) ListAuditRecords(ctx context.Context, req *opspb.ListAuditRecordsRequest) (*opspb.ListAuditRecordsResponse, error) {
	if s.audit == nil {
		return nil, status.Error(codes.Unavailable, "the audit log is not kept in the store on this server ([audit] store = false)")
	}
	n, err := limit(req.GetLimit())
	if err != nil {
		return nil, err
	}
	f := store.AuditFilter{RackID: req.GetRackId(), NodeID: req.GetNodeId(), Limit: n + 1}
	if req.GetSince() != nil {
		if err := req.GetSince().CheckValid(); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "since: %v", err)
		}
		f.Since = req.GetSince().AsTime()
	}
	if tok := req.GetPageToken(); tok != "" {
		seq, err := strconv.ParseInt(strings.TrimPrefix(tok, auditTokenPrefix), 10, 64)
		if !strings.HasPrefix(tok, auditTokenPrefix) || err != nil || seq <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "page_token %q is not one this service gave", clip(tok))
		}
		f.BeforeSeq = seq
	}
	recs, err := s.audit.ListAudit(ctx, f)
	if err != nil {
		return nil, storeStatus(err)
	}
	out := &opspb.ListAuditRecordsResponse{}
	if len(recs) > n {
		recs = recs[:n]
		out.NextPageToken = auditTokenPrefix + strconv.FormatInt(recs[n-1].Seq, 10)
	}
	for _, r := range recs {
		out.Records = append(out.Records, &opspb.AuditRecord{
			Seq:  r.Seq,
			Time: timestamppb.New(r.Time),
			Caller: &opspb.Caller{Display: r.Caller, Verified: r.CallerVerified, Subject: r.CallerSubject,
				CommonName: r.CallerCN, OrganizationalUnits: r.CallerOU, DnsNames: r.CallerDNS, Uris: r.CallerURIs,
				Address: r.CallerAddr},
			Method: r.Method, RackIds: r.RackIDs, NodeIds: r.NodeIDs, JobIds: r.JobIDs,
			Outcome: r.Outcome, Reason: r.Reason,
		})
	}
	return out, nil
}
