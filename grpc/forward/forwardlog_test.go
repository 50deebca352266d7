package forward

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
)

// logLine is one JSON log line.
type logLine map[string]any

// logLines parses the site's log.
func logLines(t *testing.T, logs string) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var line logLine
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, line)
	}
	return out
}

// linesWhere are the lines with every field of want.
func linesWhere(lines []logLine, want logLine) []logLine {
	var out []logLine
	for _, l := range lines {
		match := true
		for k, v := range want {
			match = match && l[k] == v
		}
		if match {
			out = append(out, l)
		}
	}
	return out
}

// warnings are the members' lines at warn or above: the receiving
// member's (field member) and the owners' (owner_of), the simulator's
// aside.
func warnings(lines []logLine) []logLine {
	var out []logLine
	for _, l := range lines {
		if (l["member"] != nil || l["owner_of"] != nil) && (l["level"] == "warn" || l["level"] == "error") {
			out = append(out, l)
		}
	}
	return out
}

// A forwarded call's failure is one warn line across the two members: the
// owner's, which knows its cause. The receiving member answers the same
// failure and logs it at debug, marked logged_elsewhere. Neither logs the
// request's password or the caller's credentials.
func TestAForwardedFailureIsOneWarnLineOnTheOwner(t *testing.T) {
	s := startSite(t, 1)
	c := s.member(t, "member-b")
	rack, compute := s.racks[0], s.compute[s.racks[0]]
	const password, token = "Secret-Pass-7", "secret-token-1"
	ctx := metadata.AppendToOutgoingContext(rpcContext(t), "authorization", "Bearer "+token)

	// In band: a compute node's password rotation is refused at admission.
	var trailer metadata.MD
	resp, err := c.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(compute), Username: "admin", Password: password}, grpc.Trailer(&trailer))
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("UpdateSwitchSystemPassword: %v %v", resp, err)
	}
	if got := trailer.Get(rmsserver.ReasonTrailer); len(got) != 1 || !strings.Contains(got[0], "not an NVLink switch") {
		t.Errorf("reason trailer %v", got)
	}
	lines := logLines(t, s.logs.String())
	if w := warnings(lines); len(w) != 1 || w[0]["owner_of"] != rack || w[0]["message"] != "request failed in-band" ||
		w[0]["node_id"] != compute.ID || !strings.Contains(w[0]["reason"].(string), "not an NVLink switch") {
		t.Errorf("warnings %v, want the owner's one in-band failure of %s", w, compute.ID)
	}
	if got := linesWhere(lines, logLine{"member": "member-b", "message": "request failed in-band", "level": "debug", "logged_elsewhere": true}); len(got) != 1 {
		t.Errorf("the receiving member's lines of the failure: %v, want one at debug", got)
	}

	// A server-side error status: the owner has no power control.
	_, err = c.SetPowerState(ctx, &rmspb.SetPowerStateRequest{NodeId: compute.ID, RackId: rack, Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("SetPowerState: %v", err)
	}
	lines = logLines(t, s.logs.String())
	if w := warnings(lines); len(w) != 2 || w[1]["owner_of"] != rack || w[1]["message"] != "forwarded call served" ||
		w[1]["code"] != "Unavailable" || w[1]["error"] != status.Convert(err).Message() {
		t.Errorf("warnings %v, want the owner's line of the failed SetPowerState second", w)
	}
	if got := linesWhere(lines, logLine{"member": "member-b", "message": "rpc", "rpc": rmspb.RackManager_SetPowerState_FullMethodName,
		"level": "debug", "logged_elsewhere": true}); len(got) != 1 {
		t.Errorf("the receiving member's lines of SetPowerState: %v, want one at debug", got)
	}

	// A failure of the receiving member's own, which no owner saw, is its
	// warning.
	s.cluster.setDown(rack, true)
	if _, err := c.SetPowerState(ctx, &rmspb.SetPowerStateRequest{NodeId: compute.ID, RackId: rack, Operation: rmspb.PowerOperation_POWER_OPERATION_ON}); status.Code(err) != codes.Unavailable {
		t.Fatalf("SetPowerState with the owner down: %v", err)
	}
	lines = logLines(t, s.logs.String())
	if w := warnings(lines); len(w) != 3 || w[2]["member"] != "member-b" || w[2]["message"] != "rpc" || w[2]["code"] != "Unavailable" {
		t.Errorf("warnings %v, want the receiving member's line of the unreachable owner third", w)
	}
	for _, secret := range []string{password, token} {
		if strings.Contains(s.logs.String(), secret) {
			t.Errorf("a secret (%q) is in the log:\n%s", secret, s.logs.String())
		}
	}
}

// A request split over racks whose failures are all ones the owners
// logged is no warning of the receiving member's; an owner it could not
// reach is.
func TestASplitRequestWarnsOnlyOfTheReceivingMembersOwnFailures(t *testing.T) {
	s := startSite(t, 2)
	c := s.member(t, "member-a")
	first, second := s.racks[0], s.racks[1]
	nodes := nodeSet(s.nodes[first][0], s.compute[second])
	rotate := func() *rmspb.NodeBatchResponse {
		t.Helper()
		resp, err := c.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
			Nodes: nodes, Username: "admin", Password: "Next-Pass-1"})
		if err != nil {
			t.Fatalf("UpdateSwitchSystemPassword: %v", err)
		}
		return resp.GetResponse()
	}
	// The second rack's owner refuses its compute node in band.
	if r := rotate(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetJobId() == "" {
		t.Fatalf("UpdateSwitchSystemPassword: %v", r)
	}
	lines := logLines(t, s.logs.String())
	if w := linesWhere(warnings(lines), logLine{"member": "member-a"}); len(w) != 0 {
		t.Errorf("warnings of the receiving member: %v", w)
	}
	if w := linesWhere(warnings(lines), logLine{"owner_of": second, "message": "request failed in-band"}); len(w) != 1 {
		t.Errorf("the second rack's owner's warnings: %v, want its one in-band failure", w)
	}
	if got := linesWhere(lines, logLine{"member": "member-a", "message": "request failed in-band", "level": "debug", "logged_elsewhere": true}); len(got) != 1 {
		t.Errorf("the receiving member's lines of the failure: %v, want one at debug", got)
	}

	s.cluster.setDown(second, true)
	rotate()
	own := linesWhere(warnings(logLines(t, s.logs.String())), logLine{"member": "member-a", "message": "request failed in-band"})
	if len(own) != 1 || !strings.Contains(own[0]["reason"].(string), "rack "+second+": owner not reachable; retry") {
		t.Errorf("the receiving member's warnings: %v, want the unreachable owner", own)
	}
}
