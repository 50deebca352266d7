package nvue_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// show prints an optional number, "unset" for nil.
func show(v *int64) string {
	if v == nil {
		return "unset"
	}
	return strconv.FormatInt(*v, 10)
}

// Placement is optional: whatever the switch puts in a chassis-location
// key (or leaves out), the location reads without error; what is not an
// integer is unset, integers are reported as they are.
func TestChassisLocationValuesAsTheSwitchSendsThem(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	tests := []struct {
		give       string // raw JSON; "" leaves the key out
		wantNumber string
		wantSerial string
	}{
		{give: "", wantNumber: "unset", wantSerial: ""},
		{give: "null", wantNumber: "unset", wantSerial: ""},
		{give: `""`, wantNumber: "unset", wantSerial: ""},
		{give: `"n/a"`, wantNumber: "unset", wantSerial: "n/a"},
		{give: "2.5", wantNumber: "unset", wantSerial: "2.5"},
		{give: "[1]", wantNumber: "unset", wantSerial: ""},
		{give: "18446744073709551616", wantNumber: "unset", wantSerial: "18446744073709551616"},
		{give: "0", wantNumber: "0", wantSerial: "0"},
		{give: `" 9 "`, wantNumber: "9", wantSerial: "9"},
		{give: "-1", wantNumber: "-1", wantSerial: "-1"},
		{give: "1821324000001", wantNumber: "1821324000001", wantSerial: "1821324000001"},
	}
	for _, tt := range tests {
		for _, key := range []string{"chassis-sn", "slot-number", "topology-id", "tray-index"} {
			r.sw.SetChassisLocation(key, json.RawMessage(tt.give))
		}
		loc, err := r.nv.ChassisLocation(r.ctx)
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		for name, got := range map[string]*int64{"slot-number": loc.SlotNumber, "topology-id": loc.TopologyID, "tray-index": loc.TrayIndex} {
			if show(got) != tt.wantNumber {
				t.Errorf("%s %s: got %s, want %s", name, tt.give, show(got), tt.wantNumber)
			}
		}
		if loc.ChassisSerial != tt.wantSerial {
			t.Errorf("chassis-sn %s: got %q, want %q", tt.give, loc.ChassisSerial, tt.wantSerial)
		}
	}
}
