package redfish_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestDebugLogNamesTheBMC checks that every request's debug line names the
// BMC it went to, its method, path and status.
func TestDebugLogNamesTheBMC(t *testing.T) {
	f := startFleet(t, oneCompute())
	ep := f.Devices()[0].Endpoint()
	var logs bytes.Buffer
	o := fastOptions()
	o.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	c := clientFor(t, newPool(t, o), ep)
	if _, err := c.SystemPowerState(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var line struct {
		BMC, Method, Path, Message string
		Status                     int
	}
	first, _, _ := strings.Cut(logs.String(), "\n")
	if err := json.Unmarshal([]byte(first), &line); err != nil {
		t.Fatalf("debug log %q: %v", logs.String(), err)
	}
	if line.Message != "redfish request" || line.BMC != ep.Addr(443) || line.Method != "GET" ||
		line.Path != "/redfish/v1/Systems/System_0" || line.Status != 200 {
		t.Fatalf("debug line %+v, want the request to %s", line, ep.Addr(443))
	}
}

// TestNoDebugLineBelowDebugLevel checks that an info-level logger gets no
// request lines.
func TestNoDebugLineBelowDebugLevel(t *testing.T) {
	f := startFleet(t, oneCompute())
	var logs bytes.Buffer
	o := fastOptions()
	o.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel)
	c := clientFor(t, newPool(t, o), f.Devices()[0].Endpoint())
	if _, err := c.SystemPowerState(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Fatalf("info-level log got %q", logs.String())
	}
}
