package sim_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// A BMC that goes down for a reboot still answers the requests it was
// handling: the reset that causes a reboot gets its reply, never an EOF
// (a device that dropped every connection at once lost that reply to a
// race under load, and a firmware activation failed on it).
func TestRebootLetsTheRequestsInHandFinish(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	dev := f.Nodes()[0].Device
	ep := dev.Endpoint()

	// A request in hand: its body arrives in two parts, so its handler is
	// running (reading the body) when the device goes down.
	body, feed := io.Pipe()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost,
		"https://"+ep.Addr(443)+"/redfish/v1/Chassis/Chassis_0/Actions/Oem/NvidiaChassis.AuxPowerReset", body)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // simulator
	defer tr.CloseIdleConnections()
	type answer struct {
		status int
		err    error
	}
	answered := make(chan answer, 1)
	before := dev.Requests()
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		_ = resp.Body.Close()
		answered <- answer{status: resp.StatusCode}
	}()
	if _, err := feed.Write([]byte(`{"ResetType":`)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the slow request reaches its handler", func() bool { return dev.Requests() > before })

	// Another client resets the BMC; the device goes down meanwhile.
	if err := client(t, ep).ResetManager(testCtx(t), "BMC_0", redfish.ResetGracefulRestart); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the device goes down for its reboot", func() bool { return dev.Boots() == 1 })

	if _, err := feed.Write([]byte(`"AuxPowerCycle"}`)); err != nil {
		t.Fatal(err)
	}
	_ = feed.Close()
	select {
	case a := <-answered:
		if a.err != nil || a.status != http.StatusNoContent {
			t.Fatalf("request in hand when the device went down: status %d, error %v; want 204", a.status, a.err)
		}
	case <-testCtx(t).Done():
		t.Fatal("the request in hand never got an answer")
	}
}

// Closing the simulator does not wait out a rebooting device's reply
// grace: a request in hand that never completes is cut off at once.
func TestCloseCutsTheReplyGraceShort(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	dev := f.Nodes()[0].Device
	ep := dev.Endpoint()

	body, feed := io.Pipe()
	defer feed.Close()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost,
		"https://"+ep.Addr(443)+"/redfish/v1/Chassis/Chassis_0/Actions/Oem/NvidiaChassis.AuxPowerReset", body)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // simulator
	defer tr.CloseIdleConnections()
	answered := make(chan error, 1)
	before := dev.Requests()
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		answered <- err
	}()
	if _, err := feed.Write([]byte(`{"ResetType":`)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the slow request reaches its handler", func() bool { return dev.Requests() > before })
	if err := client(t, ep).ResetManager(testCtx(t), "BMC_0", redfish.ResetGracefulRestart); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the device goes down for its reboot", func() bool { return dev.Boots() == 1 })

	// The grace is 10 s; Close returning well before it ended the grace.
	closed := make(chan struct{})
	go func() {
		f.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited on the request in hand")
	}
	_ = feed.Close() // the client writes its body until the pipe ends
	if err := <-answered; err == nil {
		t.Error("the unfinished request in hand got an answer from a closed device")
	}
}
