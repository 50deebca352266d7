package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestSecrets_NeverPrintedOrLogged(t *testing.T) {
	const pw = "fleet-secret-pw-42"
	var logs bytes.Buffer
	o := sim.Options{Layout: sim.Layout{Compute: 1, Switches: 1}, NoSwitchHosts: true,
		Credentials: hw.UserPass("root", pw), Logger: zerolog.New(&logs).Level(zerolog.DebugLevel)}
	f := start(t, o)
	n := f.Nodes()[0]
	n.Device.SetCredentials("root", pw+"-2")
	n.Device.Unreachable(0)
	o.Logger.Info().Interface("options", o).Interface("node", n).Msg("logged on purpose")
	js, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{
		"node %v": fmt.Sprintf("%v", n), "node %+v": fmt.Sprintf("%+v", n), "node %#v": fmt.Sprintf("%#v", n),
		"device %v": fmt.Sprintf("%v", n.Device), "device %#v": fmt.Sprintf("%#v", n.Device),
		"options %+v": fmt.Sprintf("%+v", o), "node json": string(js), "logs": logs.String(),
	} {
		if strings.Contains(out, pw) {
			t.Errorf("%s leaks the password: %s", name, out)
		}
	}
	if !strings.Contains(logs.String(), "credentials changed") {
		t.Fatalf("fleet logged nothing, so the check proved nothing: %q", logs.String())
	}
}
