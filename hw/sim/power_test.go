package sim_test

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// systemPower reads System_0's PowerState over HTTPS; "" means the BMC did
// not answer (connection refused or reset).
func systemPower(t *testing.T, ep hw.Endpoint) string {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // simulator
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, "https://"+ep.Addr(443)+"/redfish/v1/Systems/System_0", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var sys struct{ PowerState string }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&sys) != nil {
		t.Fatalf("GET System_0 = %d", resp.StatusCode)
	}
	return sys.PowerState
}

// rackNodes splits a one-rack fleet into trays and shelves.
func rackNodes(f *sim.Fleet) (trays, shelves []sim.Node) {
	for _, n := range f.Nodes() {
		if n.Type.Kind() == hw.KindPowerShelf {
			shelves = append(shelves, n)
		} else {
			trays = append(trays, n)
		}
	}
	return trays, shelves
}

func powerTiming() sim.Timing {
	t := fastTiming()
	t.Discharge = 180 * time.Second
	t.BMCReboot = 150 * time.Second
	t.HostReboot = 300 * time.Second
	return t
}

func setShelves(t *testing.T, shelves []sim.Node, intent redfish.ShelfIntent) {
	t.Helper()
	for _, s := range shelves {
		if err := client(t, s.BMC).SetShelfPower(testCtx(t), redfish.ShelfLiteOn, intent); err != nil {
			t.Fatalf("shelf %s: %v", s.ID, err)
		}
	}
}

func TestRackPower_ColdCycleDarkensTraysThenColdBootsThem(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 2, Switches: 1, Shelves: 2}, Timing: powerTiming()})
	rack := f.Racks()[0]
	trays, shelves := rackNodes(f)
	ctx := testCtx(t)
	compute := client(t, trays[0].BMC)
	gpu := redfish.FirmwareInventoryPath + "/HGX_FW_GPU_0"
	st, err := compute.StartMultipartUpdate(ctx, redfish.MultipartUpdate{Targets: []string{gpu}, File: fw("V9")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute.WaitTask(ctx, st.TaskID, nil); err != nil {
		t.Fatal(err)
	}
	if got := systemPower(t, trays[0].BMC); got != "On" {
		t.Fatalf("compute before the cycle: %q", got)
	}

	setShelves(t, shelves, redfish.ShelfForceOff)
	if rack.Fed() {
		t.Fatal("rack still fed with every shelf off")
	}
	for _, n := range trays {
		eventually(t, n.ID+" BMC unreachable", func() bool { return systemPower(t, n.BMC) == "" })
		if n.Device.PowerState() != "Off" || n.Device.Powered() {
			t.Fatalf("%s dark but power %s, powered %v", n.ID, n.Device.PowerState(), n.Device.Powered())
		}
	}
	sw := trays[2]
	if code := nvueStatus(t, sw.Host); code != 0 {
		t.Fatalf("NVOS host answered %d with the rack dark", code)
	}
	if !rack.Dark() {
		t.Fatal("rack not dark")
	}
	for _, s := range shelves {
		if got := systemPowerOrShelf(t, s); got != redfish.PowerOff {
			t.Fatalf("shelf %s: %s", s.ID, got)
		}
	}

	setShelves(t, shelves[:1], redfish.ShelfOn)
	for _, n := range trays {
		want := "Off"
		if n.Type.Kind() == hw.KindSwitch {
			want = "On" // switch trays power their host on by themselves
		}
		eventually(t, n.ID+" BMC back", func() bool { return systemPower(t, n.BMC) != "" })
		if got := systemPower(t, n.BMC); got != want {
			t.Fatalf("%s after cold boot: %q, want %q", n.ID, got, want)
		}
		if n.Device.Boots() != 1 {
			t.Fatalf("%s boots = %d", n.ID, n.Device.Boots())
		}
	}
	eventually(t, "NVOS host back", func() bool { return nvueStatus(t, sw.Host) == http.StatusOK })
	if !rack.Powered() || rack.Dark() {
		t.Fatal("rack not powered after the cold boot")
	}
	if installed, staged, _ := trays[0].Device.Firmware("HGX_FW_GPU_0"); installed != "V9" || staged != "" {
		t.Fatalf("staged GPU firmware after AC cycle: installed %q, staged %q", installed, staged)
	}
	if err := compute.ResetSystem(ctx, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	if err := compute.WaitPowerState(ctx, redfish.PowerOn); err != nil {
		t.Fatal(err)
	}
}

func systemPowerOrShelf(t *testing.T, s sim.Node) redfish.PowerState {
	t.Helper()
	got, err := client(t, s.BMC).ShelfPowerState(testCtx(t), redfish.ShelfLiteOn)
	if err != nil {
		t.Fatalf("shelf %s: %v", s.ID, err)
	}
	return got
}

func TestRackPower_PowerBackBeforeDischargeLeavesTraysAlone(t *testing.T) {
	tm := powerTiming()
	tm.Discharge, tm.ComputeFlash = 200*time.Second, 600*time.Second
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1, Shelves: 1}, NoSwitchHosts: true, Timing: tm})
	trays, shelves := rackNodes(f)
	dev, shelf := trays[0].Device, shelves[0].Device
	ctx := testCtx(t)
	c := client(t, trays[0].BMC)
	// The flash outlasts the discharge: it finishing OK proves the tray
	// never went dark (a power loss aborts running tasks).
	st, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{
		Targets: []string{redfish.FirmwareInventoryPath + "/FW_UEFI_0"}, File: fw("U2")})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if err := shelf.SetPSU(i, false); err != nil {
			t.Fatal(err)
		}
	}
	if f.Racks()[0].Fed() {
		t.Fatal("rack fed with every PSU off")
	}
	if err := shelf.SetPSU(2, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitTask(ctx, st.TaskID, nil); err != nil {
		t.Fatalf("flash across a short power blip: %v", err)
	}
	if got := systemPower(t, trays[0].BMC); got != "On" || dev.Boots() != 0 || !dev.Powered() {
		t.Fatalf("after the blip: power %q, boots %d, powered %v", got, dev.Boots(), dev.Powered())
	}
}

func TestRackPower_PowerLossAbortsRunningFlash(t *testing.T) {
	tm := powerTiming()
	tm.ComputeFlash = 100000 * time.Second
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1, Shelves: 1}, NoSwitchHosts: true, Timing: tm})
	trays, shelves := rackNodes(f)
	ctx := testCtx(t)
	c := client(t, trays[0].BMC)
	st, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{
		Targets: []string{redfish.FirmwareInventoryPath + "/FW_UEFI_0"}, File: fw("U3")})
	if err != nil {
		t.Fatal(err)
	}
	setShelves(t, shelves, redfish.ShelfForceOff)
	eventually(t, "tray dark", func() bool { return systemPower(t, trays[0].BMC) == "" })
	setShelves(t, shelves, redfish.ShelfOn)
	task, err := c.WaitTask(ctx, st.TaskID, nil)
	if err == nil || task.State != redfish.TaskFailed {
		t.Fatalf("flash interrupted by power loss: %+v, %v", task, err)
	}
	if installed, staged, _ := trays[0].Device.Firmware("FW_UEFI_0"); installed == "U3" || staged == "U3" {
		t.Fatalf("aborted flash left firmware: installed %q, staged %q", installed, staged)
	}
}

func TestRackPower_ShelfThatFailsPowerOnKeepsTraysDark(t *testing.T) {
	tm := powerTiming()
	tm.ShelfReboot = 600 * time.Second // longer than BMCReboot: the wait below outlasts a cold boot
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1, Switches: 1, Shelves: 2}, NoSwitchHosts: true, Timing: tm})
	rack := f.Racks()[0]
	trays, shelves := rackNodes(f)
	good, bad := shelves[0], shelves[1]
	if err := bad.Device.FailPowerOn(true); err != nil {
		t.Fatal(err)
	}
	if err := trays[0].Device.FailPowerOn(true); err == nil {
		t.Fatal("FailPowerOn accepted on a compute tray")
	}
	setShelves(t, shelves, redfish.ShelfForceOff)
	eventually(t, "rack dark", rack.Dark)
	setShelves(t, []sim.Node{bad}, redfish.ShelfOn) // accepted (2xx) but ignored
	if got := systemPowerOrShelf(t, bad); got != redfish.PowerOff {
		t.Fatalf("failing shelf reports %s after On", got)
	}
	if r := bad.Device.Resets(); r[len(r)-1] != "Chassis.On:On" {
		t.Fatalf("failing shelf resets %v", r)
	}
	// Let more than a BMC boot time pass, measured by the good shelf's
	// own manager reboot, then check the trays are still dark.
	gc := client(t, good.BMC)
	if err := gc.RestartManagerAndWait(testCtx(t), false); err != nil {
		t.Fatal(err)
	}
	for _, n := range trays {
		if got := systemPower(t, n.BMC); got != "" || n.Device.Powered() {
			t.Fatalf("%s came back with only a failing shelf on (power %q)", n.ID, got)
		}
	}
	setShelves(t, []sim.Node{good}, redfish.ShelfOn)
	for _, n := range trays {
		eventually(t, n.ID+" back", func() bool { return systemPower(t, n.BMC) != "" })
	}
}

func TestRackPower_HeldDeviceStaysDownAcrossColdBoot(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 2, Shelves: 1}, NoSwitchHosts: true, Timing: powerTiming()})
	trays, shelves := rackNodes(f)
	held, free := trays[0], trays[1]
	if err := held.Device.SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	setShelves(t, shelves, redfish.ShelfForceOff)
	eventually(t, "rack dark", f.Racks()[0].Dark)
	if err := held.Device.SetUnreachable(false); err != nil {
		t.Fatal(err)
	}
	if held.Device.Reachable() {
		t.Fatal("released device listens without power")
	}
	if err := held.Device.SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	setShelves(t, shelves, redfish.ShelfOn)
	eventually(t, "free tray back", func() bool { return systemPower(t, free.BMC) != "" })
	if got := systemPower(t, held.BMC); got != "" {
		t.Fatalf("held tray answered %q", got)
	}
	if err := held.Device.SetUnreachable(false); err != nil {
		t.Fatal(err)
	}
	if got := systemPower(t, held.BMC); got != "Off" {
		t.Fatalf("released tray after the cold boot: %q", got)
	}
}
