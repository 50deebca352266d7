package sim_test

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// TestRackPower_DarkTrayNeitherAnswersNorRefuses checks that a tray
// without power looks like one to a client: its address takes the
// connection (nothing sends a reset) and never says a word on it; once
// power is back the address refuses while the BMC boots, then serves.
func TestRackPower_DarkTrayNeitherAnswersNorRefuses(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1, Switches: 1, Shelves: 1}, Timing: powerTiming()})
	rack := f.Racks()[0]
	trays, shelves := rackNodes(f)
	setShelves(t, shelves, redfish.ShelfForceOff)
	eventually(t, "rack dark", rack.Dark)

	for _, n := range trays {
		c, err := net.DialTimeout("tcp", n.BMC.Addr(443), 10*time.Second)
		if err != nil {
			t.Fatalf("%s dark: dial %v, want a connection that never answers", n.ID, err)
		}
		if err := c.SetDeadline(time.Now().Add(500 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // simulator
		err = tc.Handshake()
		c.Close()
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s dark: TLS handshake %v; want no answer until the deadline", n.ID, err)
		}
	}

	setShelves(t, shelves, redfish.ShelfOn)
	for _, n := range trays {
		eventually(t, n.ID+" BMC back", func() bool { return systemPower(t, n.BMC) != "" })
	}
}
