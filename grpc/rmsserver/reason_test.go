package rmsserver

import (
	"net/url"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
)

// loggedClient is a second server over the simulated rack's registry,
// node runner and job engine, whose log the test reads.
func (s *simRack) loggedClient(t *testing.T) (rmspb.RackManagerClient, *syncBuffer) {
	t.Helper()
	var logs syncBuffer
	ts := startServer(t, Options{Logger: zerolog.New(&logs), Deps: Deps{Racks: s.racks, Nodes: s.runner, Jobs: s.engine}})
	return rmspb.NewRackManagerClient(dial(t, ts.addr, nil)), &logs
}

// trailerReason is the decoded rms-reason trailer, and whether there was
// one.
func trailerReason(t *testing.T, md metadata.MD) (string, bool) {
	t.Helper()
	v := md.Get(ReasonTrailer)
	if len(v) == 0 {
		return "", false
	}
	if len(v) != 1 {
		t.Fatalf("%d %s trailers, want one: %q", len(v), ReasonTrailer, v)
	}
	reason, err := url.PathUnescape(v[0])
	if err != nil {
		t.Fatalf("%s %q is not percent-encoded: %v", ReasonTrailer, v[0], err)
	}
	return reason, true
}

// warnLines are the log's warn lines.
func warnLines(t *testing.T, logs *syncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range logs.lines(t) {
		if l["level"] == "warn" {
			out = append(out, l)
		}
	}
	return out
}

// TestSetPowerStateOnAHeldNodeSaysWhichJobHoldsIt: a power change refused
// because a job holds the node answers FAILURE (the reply has no message
// field) with the refusal in the rms-reason trailer, and logs it once at
// warn with the rack, node and holder job.
func TestSetPowerStateOnAHeldNodeSaysWhichJobHoldsIt(t *testing.T) {
	s := startSimRack(t)
	client, logs := s.loggedClient(t)
	tray := s.ofKind(hw.KindCompute)[2]
	job, _ := s.holdNode(t, tray)

	var md metadata.MD
	resp, err := client.SetPowerState(rpcContext(t), &rmspb.SetPowerStateRequest{RackId: tray.RackID, NodeId: tray.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF}, grpc.Trailer(&md))
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("SetPowerState of a held node = %v, %v; want FAILURE", resp, err)
	}
	reason, ok := trailerReason(t, md)
	if !ok || reason != holderText(tray, job) {
		t.Fatalf("%s = %q (present %v), want %q", ReasonTrailer, reason, ok, holderText(tray, job))
	}
	warns := warnLines(t, logs)
	if len(warns) != 1 {
		t.Fatalf("%d warn lines, want 1: %v", len(warns), warns)
	}
	w := warns[0]
	if w["rack_id"] != tray.RackID || w["node_id"] != tray.ID || w["holder_job"] != job || w["reason"] != holderText(tray, job) ||
		w["rpc"] != rmspb.RackManager_SetPowerState_FullMethodName {
		t.Fatalf("warn line %v, want rack, node, holder job %s and the reason", w, job)
	}
	if st := s.device(t, tray.ID).PowerState(); st != "On" {
		t.Fatalf("the held tray's power is %q; the refused operation reached it", st)
	}
}

// TestGetPowerStateWithBadCredentialsGivesItsReason: a BMC that refuses
// the registered credentials makes GetPowerState answer FAILURE with the
// BMC's refusal in the trailer, logged once at warn, without the password.
func TestGetPowerStateWithBadCredentialsGivesItsReason(t *testing.T) {
	s := startSimRackWith(t, sim.Options{TimeScale: 0.001, Credentials: hw.UserPass("admin", "registered-secret")})
	client, logs := s.loggedClient(t)
	tray := s.ofKind(hw.KindCompute)[1]
	s.device(t, tray.ID).SetCredentials("admin", "rotated-elsewhere")

	var md metadata.MD
	resp, err := client.GetPowerState(rpcContext(t), &rmspb.GetPowerStateRequest{RackId: tray.RackID, NodeId: tray.ID}, grpc.Trailer(&md))
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetPstate() != "" {
		t.Fatalf("GetPowerState with bad credentials = %v, %v; want FAILURE", resp, err)
	}
	reason, ok := trailerReason(t, md)
	if !ok || !strings.Contains(reason, "HTTP 401") {
		t.Fatalf("%s = %q (present %v), want the BMC's 401", ReasonTrailer, reason, ok)
	}
	warns := warnLines(t, logs)
	if len(warns) != 1 {
		t.Fatalf("%d warn lines, want exactly 1: %v", len(warns), warns)
	}
	if w := warns[0]; w["rack_id"] != tray.RackID || w["node_id"] != tray.ID || w["reason"] != reason {
		t.Fatalf("warn line %v, want the rack, node and reason %q", w, reason)
	}
	for _, secret := range []string{"registered-secret", "rotated-elsewhere"} {
		if strings.Contains(logs.String(), secret) || strings.Contains(reason, secret) {
			t.Fatalf("a password reached the log or the trailer")
		}
	}
}

// TestGetPowerStateOfAnUnknownNodeSaysSo: before, nothing was logged and
// the reply said only FAILURE.
func TestGetPowerStateOfAnUnknownNodeSaysSo(t *testing.T) {
	s := startSimRack(t)
	client, logs := s.loggedClient(t)
	var md metadata.MD
	resp, err := client.GetPowerState(rpcContext(t), &rmspb.GetPowerStateRequest{RackId: "nope", NodeId: "n1"}, grpc.Trailer(&md))
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("GetPowerState of an unknown rack = %v, %v; want FAILURE", resp, err)
	}
	reason, ok := trailerReason(t, md)
	if !ok || !strings.Contains(reason, "nope") {
		t.Fatalf("%s = %q (present %v), want the unknown rack named", ReasonTrailer, reason, ok)
	}
	if warns := warnLines(t, logs); len(warns) != 1 || warns[0]["rack_id"] != "nope" || warns[0]["node_id"] != "n1" {
		t.Fatalf("warn lines %v, want one naming rack nope node n1", warns)
	}
}

// TestBatchPowerFailuresAreLoggedPerNode: each refused node of a batch is
// one warn line (the held one naming its holder job); the trailer lists
// the failed nodes with their reasons; the nodes that succeeded log no
// warning.
func TestBatchPowerFailuresAreLoggedPerNode(t *testing.T) {
	s := startSimRack(t)
	client, logs := s.loggedClient(t)
	trays := s.ofKind(hw.KindCompute)[:3]
	job, _ := s.holdNode(t, trays[0])
	noBMC := trays[1]
	noBMC.BMC = nil

	var md metadata.MD
	resp, err := client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(trays[0], noBMC, trays[2])}, grpc.Trailer(&md))
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("BatchGetPowerState = %v, %v; want FAILURE for the node without a BMC", resp, err)
	}
	reason, _ := trailerReason(t, md)
	if want := noBMC.ID + ": " + errNoBMC.Error(); reason != want {
		t.Fatalf("%s = %q, want %q", ReasonTrailer, reason, want)
	}

	md = nil
	set, err := client.BatchSetPowerState(rpcContext(t), &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(trays[0], noBMC, trays[2]),
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON}, grpc.Trailer(&md))
	if err != nil || set.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || set.GetResponse().GetStats().GetFailedNodes() != 2 {
		t.Fatalf("BatchSetPowerState = %v, %v; want two nodes failed", set, err)
	}
	reason, _ = trailerReason(t, md)
	if want := trays[0].ID + ": " + holderText(trays[0], job) + "; " + noBMC.ID + ": " + errNoBMC.Error(); reason != want {
		t.Fatalf("%s = %q, want %q", ReasonTrailer, reason, want)
	}
	warns := warnLines(t, logs)
	if len(warns) != 3 {
		t.Fatalf("%d warn lines, want 3 (one per failed node of the two calls): %v", len(warns), warns)
	}
	if w := warns[1]; w["node_id"] != trays[0].ID || w["holder_job"] != job || w["rpc"] != rmspb.RackManager_BatchSetPowerState_FullMethodName {
		t.Fatalf("warn line %v, want the held node with its holder job %s", w, job)
	}
	for _, w := range warns {
		if w["node_id"] == trays[2].ID {
			t.Fatalf("a node that succeeded logged a warning: %v", w)
		}
	}
}

// TestAReplyWithAMessageCarriesItAsTheReason: an in-band failure no
// handler recorded (an unknown job) is reported from the reply's message;
// a success carries no reason and logs no warning.
func TestAReplyWithAMessageCarriesItAsTheReason(t *testing.T) {
	s := startSimRack(t)
	client, logs := s.loggedClient(t)
	var md metadata.MD
	resp, err := client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: "no-such-job"}, grpc.Trailer(&md))
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("GetFirmwareJobStatus of an unknown job = %v, %v; want FAILURE", resp, err)
	}
	if reason, ok := trailerReason(t, md); !ok || reason != resp.GetErrorMessage() {
		t.Fatalf("%s = %q (present %v), want the reply's %q", ReasonTrailer, reason, ok, resp.GetErrorMessage())
	}
	tray := s.ofKind(hw.KindCompute)[0]
	md = nil
	ok, err := client.GetPowerState(rpcContext(t), &rmspb.GetPowerStateRequest{RackId: tray.RackID, NodeId: tray.ID}, grpc.Trailer(&md))
	if err != nil || ok.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("GetPowerState = %v, %v", ok, err)
	}
	if reason, present := trailerReason(t, md); present {
		t.Fatalf("a success carries %s %q", ReasonTrailer, reason)
	}
	if warns := warnLines(t, logs); len(warns) != 1 || warns[0]["reason"] != resp.GetErrorMessage() {
		t.Fatalf("warn lines %v, want the unknown job's only", warns)
	}
}

// TestReasonTrailerHasNoControlCharacters: line breaks become "; ", other
// control and bidirectional characters a space, and the rest is
// percent-encoded printable ASCII that decodes to the text.
func TestReasonTrailerHasNoControlCharacters(t *testing.T) {
	got := encodeReason("a\nb\x1b[31m 100% \u202eü")
	if want := "a; b [31m 100%25  %C3%BC"; got != want {
		t.Fatalf("encodeReason = %q, want %q", got, want)
	}
	for _, c := range []byte(got) {
		if c < 0x20 || c > 0x7e {
			t.Fatalf("encoded reason %q holds byte %#x", got, c)
		}
	}
	if dec, err := url.PathUnescape(got); err != nil || dec != "a; b [31m 100%  ü" {
		t.Fatalf("decoded %q, %v", dec, err)
	}
}

// TestABatchJobRefusalIsLoggedOnceWithItsHolder: a switch a job holds is
// refused in a batch job request; the refusal is one warn line naming
// the holder job (the job engine's own line is at debug) and the trailer
// names the switch and its holder.
func TestABatchJobRefusalIsLoggedOnceWithItsHolder(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)
	holder := (&firmwareRack{simRack: a.simRack}).holdNode(t, sw[0])
	var md metadata.MD
	resp, err := a.client.BatchResetSwitchFactoryDefault(rpcContext(t), &rmspb.BatchResetSwitchFactoryDefaultRequest{Nodes: nodeSet(sw[0], sw[1])},
		grpc.Trailer(&md))
	if err != nil || resp.GetResponse().GetStats().GetFailedNodes() != 1 {
		t.Fatalf("BatchResetSwitchFactoryDefault = %v, %v; want the held switch failed", resp, err)
	}
	a.waitJobs(t, resp.GetResponse().GetJobId())
	refusal := holderText(sw[0], holder)
	if reason, _ := trailerReason(t, md); reason != sw[0].ID+": "+refusal {
		t.Fatalf("%s = %q, want %q", ReasonTrailer, reason, sw[0].ID+": "+refusal)
	}
	var failures []map[string]any
	for _, w := range warnLines(t, a.logs) {
		switch w["message"] {
		case "request failed in-band":
			failures = append(failures, w)
		case "batch job rejected":
			t.Fatalf("the job engine also warns of the refusal: %v", w)
		}
	}
	if len(failures) != 1 || failures[0]["node_id"] != sw[0].ID || failures[0]["holder_job"] != holder || failures[0]["reason"] != refusal {
		t.Fatalf("in-band failure lines %v, want one for %s held by %s", failures, sw[0].ID, holder)
	}
}
