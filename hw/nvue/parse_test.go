package nvue

import (
	"encoding/json"
	"testing"
)

func TestActionIDShapes(t *testing.T) {
	cases := map[string]string{
		`42`:                                   "42",
		`"17"`:                                 "17",
		`{"id": 9}`:                            "9",
		`{"action-id": "a-1"}`:                 "a-1",
		`{"JobId": "j7"}`:                      "j7",
		`{"@odata.id": "/nvue_v1/action/123"}`: "123",
		`{"href": "/nvue_v1/action/55/"}`:      "55",
		`abc-77`:                               "abc-77",
	}
	for body, want := range cases {
		if got, ok := actionID([]byte(body)); !ok || got != want {
			t.Errorf("actionID(%s) = %q, %v; want %q", body, got, ok, want)
		}
	}
	for _, body := range []string{``, `{}`, `{"state":"x"}`, `[1]`, `<html>oops</html>`} {
		if got, ok := actionID([]byte(body)); ok {
			t.Errorf("actionID(%s) = %q, want none", body, got)
		}
	}
}

func TestRevisionIDShapes(t *testing.T) {
	for body, want := range map[string]string{
		`"3"`: "3", `4`: "4", `{"revision-id": "5"}`: "5", `{"id": 6}`: "6", `{"7": {"state": "pending"}}`: "7",
	} {
		if got, ok := revisionID([]byte(body)); !ok || got != want {
			t.Errorf("revisionID(%s) = %q, %v; want %q", body, got, ok, want)
		}
	}
}

func TestActionPhase(t *testing.T) {
	cases := []struct {
		st   ActionStatus
		want Phase
	}{
		{ActionStatus{State: "action_running", Status: "Installing image"}, PhaseRunning},
		{ActionStatus{State: "start"}, PhaseRunning},
		{ActionStatus{State: "action_success", Percent: 100}, PhaseSucceeded},
		{ActionStatus{State: "completed"}, PhaseSucceeded},
		{ActionStatus{State: "action_success", Status: "Image installed, system is offline during reboot"}, PhaseRebooting},
		{ActionStatus{State: "action_running", Status: "Disconnecting from NVOS"}, PhaseRebooting},
		{ActionStatus{State: "action_error", Percent: 100}, PhaseSucceeded},
		{ActionStatus{State: "action_error", Detail: "power cycle required"}, PhaseRebooting},
		{ActionStatus{State: "action_error", Percent: 40, Issues: []string{"checksum mismatch"}}, PhaseFailed},
		{ActionStatus{State: "action_failed"}, PhaseFailed},
		{ActionStatus{State: "weird_state"}, PhaseFailed},
	}
	for _, c := range cases {
		if got := c.st.Phase(); got != c.want {
			t.Errorf("%+v: phase %v, want %v", c.st, got, c.want)
		}
	}
}

func TestIssueShapes(t *testing.T) {
	got := issueTexts([]any{"a", map[string]any{"message": "b"}, map[string]any{"data": map[string]any{"msg": "c"}}})
	if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("list issues = %v", got)
	}
	got = issueTexts(map[string]any{"1": map[string]any{"message": "second"}, "0": map[string]any{"message": "first"}})
	if len(got) != 2 || got[0] != "first" {
		t.Fatalf("map issues = %v", got)
	}
}

func TestImageStateShapes(t *testing.T) {
	if n := partitionRef("partition2", "", ""); n != 2 {
		t.Errorf("partition2 -> %d", n)
	}
	if n := partitionRef(float64(1), "", ""); n != 1 {
		t.Errorf("1 -> %d", n)
	}
	if n := partitionRef("nvos-25.02.1", "nvos-25.01.1", "nvos-25.02.1"); n != 2 {
		t.Errorf("build id -> %d", n)
	}
	if b := partitionBuild("nvos-1.2.3"); b != "nvos-1.2.3" {
		t.Errorf("string partition -> %q", b)
	}
}

func TestBuildIDFromFile(t *testing.T) {
	if id, err := BuildIDFromFile("nvos-amd64-25.02.2553.bin"); err != nil || id != "nvos-25.02.2553" {
		t.Fatalf("got %q, %v", id, err)
	}
	for _, bad := range []string{"nvos.bin", "nvos-1.2.3-and-4.5.6.bin"} {
		if _, err := BuildIDFromFile(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// Firmware entries as NVOS releases report them: the running version under
// "actual-firmware" (else "version" or "Version"), health under
// "Status": {"Health"} or "Health"; anything else is left empty.
func TestFirmwareEntryShapes(t *testing.T) {
	tests := []struct {
		give                 string
		wantActual, wantInst string
		wantHealth           string
	}{
		{`{"actual-firmware": "88.0002.1950", "installed-firmware": "88.0002.2000"}`, "88.0002.1950", "88.0002.2000", ""},
		{`{"version": "0.1C", "Health": "OK"}`, "0.1C", "", "OK"},
		{`{"Version": "1.2", "Status": {"Health": "Warning"}}`, "1.2", "", "Warning"},
		{`{"actual-firmware": "", "version": "2.0", "Status": {}, "Health": "Critical"}`, "2.0", "", "Critical"},
		{`{"actual-firmware": 7, "Status": "OK"}`, "", "", ""},
		{`"N/A"`, "", "", ""},
		{`null`, "", "", ""},
	}
	for _, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.give), &v); err != nil {
			t.Fatal(err)
		}
		got := firmwareFrom("BMC", v)
		if got.Name != "BMC" || got.Actual != tt.wantActual || got.Installed != tt.wantInst || got.Health != tt.wantHealth {
			t.Errorf("firmwareFrom(%s) = %+v", tt.give, got)
		}
	}
}
