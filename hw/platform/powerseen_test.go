package platform_test

import (
	"sync"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sim"
)

// seen records what the adapters report to Deps.PowerSeen.
type seen struct {
	mu  sync.Mutex
	got []string
}

func (s *seen) note(rack, node string, st platform.PowerState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, rack+"/"+node+"="+string(st))
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func TestPowerSeen_ReadsAndChangesAreReported(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1, Shelves: 1}, false)
	rec := &seen{}
	d := deps(t)
	d.PowerSeen = rec.note
	ctx := testCtx(t)
	for _, n := range f.Nodes() {
		dev, err := platform.New(d, platform.Config{ID: n.ID, RackID: "r1", Type: n.Type, BMC: n.BMC, Host: n.Host})
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		if _, err := dev.PowerState(ctx); err != nil {
			t.Fatal(err)
		}
		if err := dev.SetPower(ctx, platform.PowerForceOff); err != nil {
			t.Fatal(err)
		}
		if err := dev.SetPower(ctx, platform.PowerOn); err != nil {
			t.Fatal(err)
		}
		want := []string{"r1/" + n.ID + "=On", "r1/" + n.ID + "=Off", "r1/" + n.ID + "=On"}
		got := rec.list()
		if len(got) < 3 || got[len(got)-3] != want[0] || got[len(got)-2] != want[1] || got[len(got)-1] != want[2] {
			t.Fatalf("%s: reported %v, want %v at the end", n.ID, got, want)
		}
	}
}

func TestPowerSeen_AFailedReadIsUnknown(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1}, false)
	rec := &seen{}
	d := deps(t)
	d.PowerSeen = rec.note
	n := f.Nodes()[0]
	n.BMC.Credentials = hw.UserPass(n.BMC.Credentials.Username, "wrong") // the BMC refuses the login
	dev, err := platform.New(d, platform.Config{ID: n.ID, RackID: "r1", Type: n.Type, BMC: n.BMC})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if _, err := dev.PowerState(testCtx(t)); err == nil {
		t.Fatal("a read with a wrong password succeeded")
	}
	if got := rec.list(); len(got) != 1 || got[0] != "r1/"+n.ID+"=Unknown" {
		t.Fatalf("reported %v", got)
	}
}
