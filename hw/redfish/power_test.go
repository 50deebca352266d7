package redfish_test

import (
	"errors"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestComputePower_ReadAndReset(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)

	got, err := c.SystemPowerState(ctx)
	if err != nil || got != redfish.PowerOn {
		t.Fatalf("initial power = %v, %v; want On", got, err)
	}
	if err := c.ResetSystem(ctx, redfish.ResetGracefulShutdown); err != nil {
		t.Fatalf("graceful shutdown: %v", err)
	}
	if err := c.WaitPowerState(ctx, redfish.PowerOff); err != nil {
		t.Fatalf("wait off: %v", err)
	}
	if err := c.ResetSystem(ctx, redfish.ResetOn); err != nil {
		t.Fatalf("power on: %v", err)
	}
	if err := c.WaitPowerState(ctx, redfish.PowerOn); err != nil {
		t.Fatalf("wait on: %v", err)
	}
	resets := dev.Resets()
	if len(resets) != 2 || resets[0] != "GracefulShutdown" || resets[1] != "On" {
		t.Fatalf("device saw resets %v, want [GracefulShutdown On]", resets)
	}
}

func TestComputePower_TransitionalStateIsUnknown(t *testing.T) {
	ctx := testCtx(t)
	f, err := sim.Start(ctx, sim.Options{Layout: oneCompute(), TimeScale: 1, NoSwitchHosts: true, Network: testNetwork})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := clientFor(t, newPool(t, fastOptions()), f.Devices()[0].Endpoint())
	if err := c.ResetSystem(ctx, redfish.ResetGracefulShutdown); err != nil {
		t.Fatal(err)
	}
	// At real speed the shutdown takes 10 s: the system reports PoweringOff.
	got, err := c.SystemPowerState(ctx)
	if err != nil || got != redfish.PowerUnknown {
		t.Fatalf("power while shutting down = %v, %v; want Unknown", got, err)
	}
}

func TestComputePower_InvalidResetTypeRejected(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1})
	c := clientFor(t, newPool(t, fastOptions()), f.Devices()[0].Endpoint())
	// Switch BMCs do not offer Nmi; the client refuses from the advertised
	// allowable values without posting.
	err := c.ResetSystem(testCtx(t), redfish.ResetNmi)
	if !errors.Is(err, redfish.ErrActionUnavailable) {
		t.Fatalf("Nmi on switch BMC: err = %v, want ErrActionUnavailable", err)
	}
	if n := len(f.Devices()[0].Resets()); n != 0 {
		t.Fatalf("device recorded %d resets, want 0", n)
	}
}

func TestPower_WrongCredentialsIsUnauthenticated(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	ep := dev.Endpoint()
	dev.SetCredentials("admin", "rotated-elsewhere")
	c := clientFor(t, newPool(t, fastOptions()), ep)
	_, err := c.SystemPowerState(testCtx(t))
	if !errors.Is(err, redfish.ErrUnauthenticated) {
		t.Fatalf("err = %v, want ErrUnauthenticated", err)
	}
	var he *redfish.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 {
		t.Fatalf("err = %#v, want *HTTPError 401", err)
	}
}

func TestPower_UnreachableIsUnreachable(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	// A fresh pool holds no connection: the dial itself is refused.
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	if err := dev.SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	_, err := c.SystemPowerState(ctx)
	if !errors.Is(err, redfish.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if err := dev.SetUnreachable(false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SystemPowerState(ctx); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestPower_UnreachableWindowEnds(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	if _, err := c.SystemPowerState(ctx); err != nil {
		t.Fatal(err)
	}
	dev.Unreachable(300 * time.Millisecond)
	// The pooled connection dies with the listener: depending on timing the
	// first failure is a reset (transport) or a refused dial (unreachable).
	_, err := c.SystemPowerState(ctx)
	if !errors.Is(err, redfish.ErrUnreachable) && !errors.Is(err, redfish.ErrTransport) {
		t.Fatalf("inside the window: err = %v, want ErrUnreachable or ErrTransport", err)
	}
	if err := c.WaitUp(ctx); err != nil {
		t.Fatalf("device did not come back: %v", err)
	}
}

func TestPower_SlowBMCTimesOut(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	o := fastOptions()
	o.RequestTimeout = 50 * time.Millisecond
	c := clientFor(t, newPool(t, o), dev.Endpoint())
	dev.SetLatency(2 * time.Second)
	_, err := c.SystemPowerState(testCtx(t))
	if !errors.Is(err, redfish.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestShelfPower_LiteOn(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1, ShelfType: hw.PowerShelfGB200Liteon})
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)

	if got, err := c.ShelfPowerState(ctx, redfish.ShelfLiteOn); err != nil || got != redfish.PowerOn {
		t.Fatalf("initial = %v, %v; want On", got, err)
	}
	if err := c.SetShelfPower(ctx, redfish.ShelfLiteOn, redfish.ShelfForceOff); err != nil {
		t.Fatalf("force off: %v", err)
	}
	if got, err := c.ShelfPowerState(ctx, redfish.ShelfLiteOn); err != nil || got != redfish.PowerOff {
		t.Fatalf("after force off = %v, %v; want Off", got, err)
	}
	if err := c.SetShelfPower(ctx, redfish.ShelfLiteOn, redfish.ShelfOn); err != nil {
		t.Fatalf("on: %v", err)
	}
	// Graceful off has no #Chassis.Off on LiteOn: it falls back to
	// #Chassis.Reset GracefulShutdown, which its ActionInfo allows.
	if err := c.SetShelfPower(ctx, redfish.ShelfLiteOn, redfish.ShelfOff); err != nil {
		t.Fatalf("graceful off: %v", err)
	}
	want := []string{"Chassis.ForceOff:ForceOff", "Chassis.On:On", "Chassis.Reset:GracefulShutdown"}
	got := dev.Resets()
	if len(got) != len(want) {
		t.Fatalf("device saw %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("device saw %v, want %v", got, want)
		}
	}
}

func TestShelfPower_OnePSUOffMakesShelfOff(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1})
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	if err := dev.SetPSU(3, false); err != nil {
		t.Fatal(err)
	}
	psus, err := c.ShelfPSUs(testCtx(t), redfish.ShelfLiteOn)
	if err != nil {
		t.Fatal(err)
	}
	if len(psus) != 6 || psus[3].State != redfish.PowerOff || psus[2].State != redfish.PowerOn {
		t.Fatalf("psus = %+v", psus)
	}
	if got := redfish.AggregatePSUs(psus); got != redfish.PowerOff {
		t.Fatalf("aggregate = %v, want Off", got)
	}
}

func TestShelfPower_Delta(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1, ShelfType: hw.PowerShelfGB200Delta})
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	if err := c.SetShelfPower(ctx, redfish.ShelfDelta, redfish.ShelfOff); err != nil {
		t.Fatalf("off: %v", err)
	}
	// Delta PSUs keep PowerState "On" (input present); only the OEM value
	// says the output is off.
	if got, err := c.ShelfPowerState(ctx, redfish.ShelfDelta); err != nil || got != redfish.PowerOff {
		t.Fatalf("after off = %v, %v; want Off", got, err)
	}
	if err := c.SetShelfPower(ctx, redfish.ShelfDelta, redfish.ShelfOn); err != nil {
		t.Fatalf("on: %v", err)
	}
	if got, err := c.ShelfPowerState(ctx, redfish.ShelfDelta); err != nil || got != redfish.PowerOn {
		t.Fatalf("after on = %v, %v; want On", got, err)
	}
	if r := dev.Resets(); len(r) != 2 || r[0] != "PowerShelf.TurnOffPSUs" || r[1] != "PowerShelf.TurnOnPSUs" {
		t.Fatalf("device saw %v", r)
	}
}

func TestShelfPower_LiteOnStyleOnDeltaShelfIsNotFound(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1, ShelfType: hw.PowerShelfGB300Delta})
	c := clientFor(t, newPool(t, fastOptions()), f.Devices()[0].Endpoint())
	_, err := c.ShelfPowerState(testCtx(t), redfish.ShelfLiteOn)
	if !errors.Is(err, redfish.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

func TestAggregatePSUs(t *testing.T) {
	on, off, unk := redfish.PSU{State: redfish.PowerOn}, redfish.PSU{State: redfish.PowerOff}, redfish.PSU{State: redfish.PowerUnknown}
	tests := []struct {
		name string
		give []redfish.PSU
		want redfish.PowerState
	}{
		{"none", nil, redfish.PowerUnknown},
		{"all on", []redfish.PSU{on, on}, redfish.PowerOn},
		{"one off", []redfish.PSU{on, off, on}, redfish.PowerOff},
		{"off beats unknown", []redfish.PSU{unk, off}, redfish.PowerOff},
		{"unknown", []redfish.PSU{on, unk}, redfish.PowerUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redfish.AggregatePSUs(tt.give); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
