package redfish

import (
	"encoding/json"
	"testing"
)

// Every spelling a BMC uses for a power state maps as the decoder reads
// it: plain words in any case and padding (read in place), escaped ones
// (decoded), booleans, and anything else as Unknown.
func TestParsePowerStateReadsWordsEscapesAndBooleans(t *testing.T) {
	for raw, want := range map[string]PowerState{
		`"On"`:           PowerOn,
		`"on"`:           PowerOn,
		` "ON" `:         PowerOn,
		`" On "`:         PowerOn,
		`"true"`:         PowerOn,
		`"Off"`:          PowerOff,
		`"FALSE"`:        PowerOff,
		`"\u004fn"`:      PowerOn,  // "On" with an escape: the decoder's path
		`"O\u0066f"`:     PowerOff, // "Off"
		`"\ton"`:         PowerOn,  // an escaped tab is padding
		`"PoweringOn"`:   PowerUnknown,
		`"Paused"`:       PowerUnknown,
		`""`:             PowerUnknown,
		`true`:           PowerOn,
		`false`:          PowerOff,
		`null`:           PowerUnknown,
		`1`:              PowerUnknown,
		`{"State":"On"}`: PowerUnknown,
		`"On" "Off"`:     PowerUnknown, // not one value
		`"\"On\""`:       PowerUnknown, // quotes inside the string
		"\"o\x01n\"":     PowerUnknown, // a raw control byte is not JSON
		`"on`:            PowerUnknown,
	} {
		if got := parsePowerState(json.RawMessage(raw)); got != want {
			t.Errorf("parsePowerState(%s) = %s, want %s", raw, got, want)
		}
	}
}
