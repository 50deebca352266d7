package redfish_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
)

func TestSecrets_NeverPrintedOrLogged(t *testing.T) {
	const password = "s3cr3t-bmc-pa55"
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	dev.SetCredentials("admin", password)

	var logs bytes.Buffer
	o := fastOptions()
	o.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	p := newPool(t, o)
	ep := dev.Endpoint()
	c := clientFor(t, p, ep)
	ctx := testCtx(t)
	if _, err := c.SystemPowerState(ctx); err != nil {
		t.Fatal(err)
	}
	o.Logger.Info().Interface("endpoint", ep).Stringer("client", c).Msg("logged on purpose")

	// A failing call produces an error that mentions the request, not the
	// secret.
	bad := ep
	bad.Credentials = hw.UserPass("admin", password+"-wrong")
	_, authErr := clientFor(t, p, bad).SystemPowerState(ctx)
	if authErr == nil {
		t.Fatal("wrong password accepted")
	}
	_, createErr := p.Client(hw.Endpoint{IP: ep.IP, Credentials: hw.UserPass("", password)})
	if createErr == nil {
		t.Fatal("endpoint without user accepted")
	}
	epJSON, err := json.Marshal(ep)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"client %v":      fmt.Sprintf("%v", c),
		"client %+v":     fmt.Sprintf("%+v", c),
		"client %#v":     fmt.Sprintf("%#v", c),
		"endpoint %+v":   fmt.Sprintf("%+v", ep),
		"endpoint %#v":   fmt.Sprintf("%#v", ep),
		"endpoint json":  string(epJSON),
		"auth error":     authErr.Error(),
		"auth error %+v": fmt.Sprintf("%+v", authErr),
		"create error":   createErr.Error(),
		"debug log":      logs.String(),
	}
	for name, out := range outputs {
		if strings.Contains(out, password) {
			t.Errorf("%s leaks the password: %s", name, out)
		}
	}
	if !strings.Contains(logs.String(), "redfish request") {
		t.Fatalf("debug log is empty, so the check above proved nothing: %q", logs.String())
	}
}
