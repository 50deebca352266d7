package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestAuditLogToAFileAndTheStore: with [audit] output a file and the log
// at warn, a mutating RPC and an admin call are each one line of the file
// (none of rmsd's log) and one record of the read service; reads are not
// recorded.
func TestAuditLogToAFileAndTheStore(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.log")
	d := startRun(t, []string{"RMS_ALLOW_INSECURE=1", "RMS_ADMIN__ENABLED=true", "RMS_ADMIN__PORT=0",
		"RMS_AUDIT__OUTPUT=" + file, "RMS_LOGGING__LOG_LEVEL=warn"}, "--config", writeFile(t, insecureLoopback))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rms := rmspb.NewRackManagerClient(d.conn)
	reply, err := rms.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-9", NodeId: "node-9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rms.ListRacks(ctx, &rmspb.ListRacksRequest{}); err != nil {
		t.Fatal(err)
	}
	adminAddr, _ := logLine(t, d.stdout.String(), "admin service serving: it can kill job engine actors")["addr"].(string)
	adminConn, err := grpc.NewClient(adminAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer adminConn.Close()
	if _, err := adminpb.NewAdminClient(adminConn).ListActors(ctx, &adminpb.ListActorsRequest{Kind: "registry"}); err != nil {
		t.Fatal(err)
	}

	ops := opspb.NewOpsClient(d.conn)
	var recs []*opspb.AuditRecord
	deadline := time.Now().Add(30 * time.Second)
	for len(recs) < 2 && time.Now().Before(deadline) {
		list, err := ops.ListAuditRecords(ctx, &opspb.ListAuditRecordsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		recs = list.GetRecords()
		time.Sleep(20 * time.Millisecond) // the store is written asynchronously
	}
	if len(recs) != 2 || recs[0].GetMethod() != "/rmsd_admin.Admin/ListActors" || recs[0].GetOutcome() != "OK" ||
		recs[1].GetMethod() != "/rack_manager.RackManager/DeleteNode" || recs[1].GetNodeIds()[0] != "node-9" {
		t.Fatalf("the read service lists %v", recs)
	}
	if want := map[bool]string{true: "FAILURE", false: "OK"}[reply.GetResponse().GetStatus() == rmspb.ReturnCode_RETURN_CODE_FAILURE]; recs[1].GetOutcome() != want {
		t.Errorf("DeleteNode answered %v, recorded %s", reply, recs[1].GetOutcome())
	}
	stopRun(t, d)

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"rpc":"/rack_manager.RackManager/DeleteNode"`) ||
		!strings.Contains(lines[1], `"rpc":"/rmsd_admin.Admin/ListActors"`) || !strings.Contains(lines[1], `"stream":"audit"`) {
		t.Errorf("audit file:\n%s", data)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode %v (%v), want 0600", info.Mode(), err)
	}
	if strings.Contains(d.stdout.String(), `"stream":"audit"`) {
		t.Errorf("audit records in rmsd's log although [audit] output is a file:\n%s", d.stdout.String())
	}
}

func TestAuditLogOffAnswersUnavailable(t *testing.T) {
	d := startRun(t, []string{"RMS_ALLOW_INSECURE=1", "RMS_AUDIT__ENABLED=false"}, "--config", writeFile(t, insecureLoopback))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := rmspb.NewRackManagerClient(d.conn).DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-9", NodeId: "node-9"}); err != nil {
		t.Fatal(err)
	}
	_, err := opspb.NewOpsClient(d.conn).ListAuditRecords(ctx, &opspb.ListAuditRecordsRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Errorf("ListAuditRecords without an audit log: %v, want UNAVAILABLE", err)
	}
	if jobs, err := opspb.NewOpsClient(d.conn).ListJobs(ctx, &opspb.ListJobsRequest{}); err != nil || len(jobs.GetJobs()) != 0 {
		t.Errorf("ListJobs of an idle daemon: %v, %v", jobs, err)
	}
	health, err := healthpb.NewHealthClient(d.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: opspb.Ops_ServiceDesc.ServiceName})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health of the read service: %v, %v; want SERVING", health, err)
	}
	stopRun(t, d)
	if !strings.Contains(d.stdout.String(), "audit log disabled") || strings.Contains(d.stdout.String(), `"stream":"audit"`) {
		t.Errorf("rmsd's log:\n%s", d.stdout.String())
	}
}
