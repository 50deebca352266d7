package nodeops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// adapterOf runs one operation on n and returns the adapter it was given.
func adapterOf(t *testing.T, r *Runner, n hw.Node) platform.Device {
	t.Helper()
	var got platform.Device
	if err := r.One(context.Background(), n, func(_ context.Context, _ int, d platform.Device) error {
		got = d
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", n.ID, err)
	}
	return got
}

func TestANodesOperationsShareItsAdapterUntilItsConfigurationChanges(t *testing.T) {
	r := newRunner(t, 4)
	n := fakeNode("n1", "127.0.66.60")
	first := adapterOf(t, r, n)
	if again := adapterOf(t, r, n); again != first {
		t.Fatal("a second operation on an unchanged node built a new adapter")
	}
	changes := map[string]func(*hw.Node){
		"password": func(n *hw.Node) { n.BMC.Credentials = hw.UserPass("u", "rotated") },
		"user":     func(n *hw.Node) { n.BMC.Credentials = hw.UserPass("v", "p") },
		"port":     func(n *hw.Node) { n.BMC.Port = 8443 },
		"type":     func(n *hw.Node) { n.Type = hw.ComputeGB300Nvidia },
		"node id":  func(n *hw.Node) { n.ID = "n1-renamed" },
		"rack":     func(n *hw.Node) { n.RackID = "r2" },
	}
	for what, change := range changes {
		changed := fakeNode("n1", "127.0.66.60")
		bmc := *changed.BMC
		changed.BMC = &bmc
		change(&changed)
		d := adapterOf(t, r, changed)
		if d == first {
			t.Errorf("after a %s change the node's old adapter was reused", what)
		}
		if d.ID() != changed.ID {
			t.Errorf("after a %s change the adapter is %s's", what, d.ID())
		}
	}
	// The changed configurations replaced the entry; they did not pile up.
	if got := r.adapters.size(); got > 2 { // 127.0.66.60:443 and :8443
		t.Fatalf("%d adapters kept for one BMC", got)
	}
}

func TestTheAdapterCacheIsBounded(t *testing.T) {
	r := newRunner(t, 4)
	r.adapters = newAdapters(3)
	for i := range 10 {
		adapterOf(t, r, fakeNode(fmt.Sprintf("n%d", i), fmt.Sprintf("127.0.66.%d", 70+i)))
	}
	if got := r.adapters.size(); got != 3 {
		t.Fatalf("%d adapters kept with a bound of 3", got)
	}
	// Past the bound operations still run, each with its own node's adapter.
	for i := range 10 {
		n := fakeNode(fmt.Sprintf("n%d", i), fmt.Sprintf("127.0.66.%d", 70+i))
		if d := adapterOf(t, r, n); d.ID() != n.ID {
			t.Fatalf("node %s got %s's adapter", n.ID, d.ID())
		}
	}
}

func TestAFailedBuildKeepsNothing(t *testing.T) {
	r := newRunner(t, 1)
	n := fakeNode("n", "127.0.66.80")
	n.Type = hw.NodeTypeUnspecified
	err := r.One(context.Background(), n, func(context.Context, int, platform.Device) error { return nil })
	if !errors.Is(err, hw.ErrUnsupported) {
		t.Fatalf("unsupported type: %v", err)
	}
	if got := r.adapters.size(); got != 0 {
		t.Fatalf("%d adapters kept after a failed build", got)
	}
}

// TestRotatedBMCCredentialsTakeEffectAtOnce reads a simulated rack
// through a runner, concurrently, rotates one tray's password and reads
// again: the old password is refused (the adapter kept for it is not
// reused with the new one, nor the other way round), the new one works,
// and no error names either password.
func TestRotatedBMCCredentialsTakeEffectAtOnce(t *testing.T) {
	fleet, err := sim.Start(context.Background(), sim.Options{Network: 99, NoSwitchHosts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	var nodes []hw.Node
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		nodes = append(nodes, hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc})
	}
	// Generous bounds: a loaded machine can take seconds per handshake.
	pool := redfish.NewPool(redfish.Options{ConnectTimeout: 2 * time.Minute, RequestTimeout: 2 * time.Minute})
	t.Cleanup(pool.Close)
	r := New(platform.Deps{Redfish: pool, Logger: zerolog.Nop()}, 64)
	read := func(ctx context.Context, _ int, d platform.Device) error {
		_, err := d.PowerState(ctx)
		return err
	}
	// Several batches of the same rack at once share its adapters.
	var wg sync.WaitGroup
	failures := make(chan error, 4*len(nodes))
	for range 4 {
		wg.Go(func() {
			for i, err := range r.Each(context.Background(), nodes, read) {
				if err != nil {
					failures <- fmt.Errorf("%s: %w", nodes[i].ID, err)
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Fatal(err)
	}

	var tray hw.Node
	var dev *sim.Device
	for i, sn := range fleet.Nodes() {
		if sn.Type == hw.ComputeGB200Nvidia {
			tray, dev = nodes[i], sn.Device
			break
		}
	}
	const newPassword = "s3cret-rotated"
	old := tray.BMC.Credentials.Password.Reveal()
	if old == "" || old == newPassword {
		t.Fatalf("the simulated tray's password %q cannot show a rotation", old)
	}
	dev.SetCredentials(tray.BMC.Credentials.Username, newPassword)
	err = r.One(context.Background(), tray, read)
	if !errors.Is(err, redfish.ErrUnauthenticated) {
		t.Fatalf("read with the old password after the rotation: %v", err)
	}
	rotated := tray
	bmc := *tray.BMC
	bmc.Credentials = hw.UserPass(bmc.Credentials.Username, newPassword)
	rotated.BMC = &bmc
	if err := r.One(context.Background(), rotated, read); err != nil {
		t.Fatalf("read with the new password: %v", err)
	}
	err = r.One(context.Background(), tray, read)
	if !errors.Is(err, redfish.ErrUnauthenticated) {
		t.Fatalf("the old password again, after the new one worked: %v", err)
	}
	if strings.Contains(err.Error(), old) || strings.Contains(err.Error(), newPassword) {
		t.Fatalf("an error names a password: %v", err)
	}
}
