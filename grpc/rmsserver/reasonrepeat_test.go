package rmsserver

import (
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestPollingAnUnknownJobWarnsOnce: a caller that keeps polling a job the
// server does not know gets the reason in every reply's trailer, but the
// log warns once; the repeats are at debug.
func TestPollingAnUnknownJobWarnsOnce(t *testing.T) {
	s := startSimRack(t)
	client, logs := s.loggedClient(t)
	const polls = 3
	for i := range polls {
		var md metadata.MD
		resp, err := client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: "expired-job"}, grpc.Trailer(&md))
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
			t.Fatalf("poll %d = %v, %v; want FAILURE", i, resp, err)
		}
		if reason, ok := trailerReason(t, md); !ok || reason != resp.GetErrorMessage() {
			t.Fatalf("poll %d: %s = %q (present %v), want %q", i, ReasonTrailer, reason, ok, resp.GetErrorMessage())
		}
	}
	if warns := warnLines(t, logs); len(warns) != 1 || warns[0]["rpc"] != rmspb.RackManager_GetFirmwareJobStatus_FullMethodName {
		t.Fatalf("warn lines %v, want one for the first poll", warns)
	}
	var repeats int
	for _, l := range logs.lines(t) {
		if l["level"] == "debug" && l["message"] == "request failed in-band" && l["repeat"] == true {
			repeats++
		}
	}
	if repeats != polls-1 {
		t.Fatalf("%d repeats at debug, want %d", repeats, polls-1)
	}
	// Another failure of the same caller is news: it warns.
	if _, err := client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: "another-job"}); err != nil {
		t.Fatal(err)
	}
	if warns := warnLines(t, logs); len(warns) != 2 {
		t.Fatalf("%d warn lines after a second unknown job, want 2: %v", len(warns), warns)
	}
}

// TestRepeatFilterWindowAndBound: repeats within the window are not
// warned; the first after it is, with their count; each caller has its
// own; past the bound the failure warned longest ago is forgotten.
func TestRepeatFilterWindowAndBound(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	f := newRepeatFilter(time.Minute, 2, func() time.Time { return now })
	a := failureKey{caller: "peer 10.0.0.1", rpc: "/x/Poll", reason: "job j not found"}
	check := func(k failureKey, wantWarn bool, wantRepeats int) {
		t.Helper()
		if warn, repeats := f.warn(k); warn != wantWarn || repeats != wantRepeats {
			t.Fatalf("warn(%+v) = %v, %d; want %v, %d", k, warn, repeats, wantWarn, wantRepeats)
		}
	}
	check(a, true, 0)
	check(a, false, 0)
	now = now.Add(59 * time.Second)
	check(a, false, 0)
	now = now.Add(time.Second)
	check(a, true, 2)
	check(a, false, 0)

	b := a
	b.caller = "CN=ops"
	check(b, true, 0)
	c := a
	c.node = "n1"
	check(c, true, 0) // the third failure: a, warned longest ago, is forgotten
	check(b, false, 0)
	check(a, true, 0)
}

// TestCallerKeyIgnoresThePort: a poller that dials anew for each poll is
// one caller; a verified certificate is its subject.
func TestCallerKeyIgnoresThePort(t *testing.T) {
	if a, b := callerKey(callerid.Identity{Addr: "10.0.0.1:50001"}), callerKey(callerid.Identity{Addr: "10.0.0.1:50002"}); a != b {
		t.Errorf("two ports of one host are %q and %q", a, b)
	}
	if a, b := callerKey(callerid.Identity{Addr: "10.0.0.1:50001"}), callerKey(callerid.Identity{Addr: "10.0.0.2:50001"}); a == b {
		t.Errorf("two hosts are both %q", a)
	}
	v := callerid.Identity{Verified: true, Subject: "CN=ops", Addr: "10.0.0.1:1"}
	if got := callerKey(v); got != "CN=ops" {
		t.Errorf("verified caller %q, want its subject", got)
	}
	if got := callerKey(callerid.Identity{}); got != "unknown" {
		t.Errorf("no peer %q", got)
	}
}
