package opsserver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/grpc/opsserver"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// fakeJobs answers listings from a fixed set of jobs, in the registry's
// order, as the registry would.
type fakeJobs struct {
	jobs []messages.JobSnapshot // newest first
	got  []messages.ListJobs
}

func (f *fakeJobs) List(_ context.Context, q messages.ListJobs) (messages.ListJobsReply, error) {
	f.got = append(f.got, q)
	var rep messages.ListJobsReply
	for _, j := range f.jobs {
		if (q.State == messages.StateUnspecified || j.State == q.State) && (q.After.IsZero() || q.After.Before(j.CreatedAt, j.ID)) {
			rep.Jobs = append(rep.Jobs, j)
		}
	}
	if q.Limit > 0 && len(rep.Jobs) > q.Limit {
		rep.Jobs = rep.Jobs[:q.Limit]
		last := rep.Jobs[q.Limit-1]
		rep.Next = messages.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return rep, nil
}

func TestListAuditRecordsPagesNewestFirst(t *testing.T) {
	st, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	var recs []store.AuditRecord
	for i := range 5 {
		recs = append(recs, store.AuditRecord{Time: at.Add(time.Duration(i) * time.Minute), Method: fmt.Sprintf("/m/%d", i),
			RackIDs: []string{"rack-1"}, NodeIDs: []string{fmt.Sprintf("n%d", i%2)}, Outcome: "OK", Caller: "CN=ops", CallerVerified: true, CallerCN: "ops"})
	}
	if _, err := st.AppendAudit(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	svc := opsserver.New(st, nil)
	var methods []string
	req := &opspb.ListAuditRecordsRequest{RackId: "rack-1", Limit: 2}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		resp, err := svc.ListAuditRecords(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.GetRecords() {
			methods = append(methods, r.GetMethod())
			if r.GetCaller().GetCommonName() != "ops" || !r.GetCaller().GetVerified() {
				t.Errorf("caller %v", r.GetCaller())
			}
		}
		if resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
	}
	if fmt.Sprint(methods) != "[/m/4 /m/3 /m/2 /m/1 /m/0]" {
		t.Errorf("pages gave %v, want every record newest first", methods)
	}
	since, err := svc.ListAuditRecords(t.Context(), &opspb.ListAuditRecordsRequest{NodeId: "n0", Since: timestamppb.New(at.Add(time.Minute))})
	if err != nil || len(since.GetRecords()) != 2 || since.GetNextPageToken() != "" {
		t.Errorf("node n0 since 7:01: %v, %v; want the records at 7:02 and 7:04", since, err)
	}
	if _, err := svc.ListAuditRecords(t.Context(), &opspb.ListAuditRecordsRequest{PageToken: "bogus"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a bogus page token: %v, want INVALID_ARGUMENT", err)
	}
	if _, err := opsserver.New(nil, nil).ListAuditRecords(t.Context(), &opspb.ListAuditRecordsRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("without a stored audit log: %v, want UNAVAILABLE", err)
	}
}

func TestListJobsValidatesAndPages(t *testing.T) {
	at := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	jobs := &fakeJobs{}
	for i := 4; i >= 0; i-- {
		jobs.jobs = append(jobs.jobs, messages.JobSnapshot{ID: fmt.Sprintf("job-%d", i), Type: messages.TypeFirmwareUpdate,
			State: messages.StateCompleted, RackID: "rack-1", CreatedAt: at.Add(time.Duration(i) * time.Second), ChildIDs: []string{"c"}})
	}
	svc := opsserver.New(nil, jobs)
	var ids []string
	req := &opspb.ListJobsRequest{State: "Completed", Type: "firmware_update", RackId: "rack-1", Limit: 2, Since: timestamppb.New(at)}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		resp, err := svc.ListJobs(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range resp.GetJobs() {
			ids = append(ids, j.GetJobId())
			if j.GetType() != "firmware_update" || j.GetState() != "completed" || j.GetChildCount() != 1 {
				t.Errorf("job %v", j)
			}
		}
		if resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
	}
	if fmt.Sprint(ids) != "[job-4 job-3 job-2 job-1 job-0]" {
		t.Errorf("pages gave %v", ids)
	}
	q := jobs.got[0]
	if q.State != messages.StateCompleted || q.Type != "firmware_update" || q.RackID != "rack-1" || !q.Since.Equal(at) || q.Limit != 2 {
		t.Errorf("the registry was asked %+v", q)
	}
	for _, bad := range []*opspb.ListJobsRequest{{State: "sleeping"}, {Type: "teleport"}, {PageToken: "!!"}, {Limit: -1}} {
		if _, err := svc.ListJobs(t.Context(), bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("ListJobs %v: %v, want INVALID_ARGUMENT", bad, err)
		}
	}
	if _, err := svc.ListJobs(t.Context(), &opspb.ListJobsRequest{Type: "job"}); err != nil {
		t.Errorf("type job (batch children): %v", err)
	}
}
