package sim_test

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// raw sends one request to a device and returns status and body.
func raw(t *testing.T, ep hw.Endpoint, method, path, body string) (int, map[string]any) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // simulator
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(testCtx(t), method, "https://"+ep.Addr(443)+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out) // 204 has no body
	return resp.StatusCode, out
}

func fw(version string) redfish.Firmware {
	body := sim.FirmwareMagic + version + "\n" + strings.Repeat("z", 1000)
	return redfish.Firmware{FileName: "pkg.fwpkg", Body: strings.NewReader(body), Size: int64(len(body))}
}

func TestCompute_BMCResetActivatesOnlyBMCFirmware(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	dev := f.Nodes()[0].Device
	c := client(t, dev.Endpoint())
	ctx := testCtx(t)
	for _, target := range []string{redfish.FirmwareInventoryPath + "/FW_BMC_0", redfish.FirmwareInventoryPath + "/HGX_FW_GPU_0"} {
		st, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{Targets: []string{target}, File: fw("V2")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitTask(ctx, st.TaskID, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ResetManager(ctx, "BMC_0", redfish.ResetGracefulRestart); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitDownUp(ctx); err != nil {
		t.Fatal(err)
	}
	bmc, _, _ := dev.Firmware("FW_BMC_0")
	gpu, gpuStaged, _ := dev.Firmware("HGX_FW_GPU_0")
	if bmc != "V2" || gpu == "V2" || gpuStaged != "V2" {
		t.Fatalf("after BMC reset: bmc %q, gpu %q (staged %q)", bmc, gpu, gpuStaged)
	}
	if err := c.AuxPowerCycle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitDownUp(ctx); err != nil {
		t.Fatal(err)
	}
	if gpu, _, _ := dev.Firmware("HGX_FW_GPU_0"); gpu != "V2" {
		t.Fatalf("after aux power cycle: gpu %q", gpu)
	}
	if dev.PowerState() != "Off" {
		t.Fatalf("power after aux cycle = %s, want Off", dev.PowerState())
	}
	if dev.Boots() != 2 {
		t.Fatalf("boots = %d, want 2 (BMC reset, aux power cycle)", dev.Boots())
	}
}

func TestShelf_ManagerResetTakesServiceRootAwayForAWhile(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Shelves: 1}, NoSwitchHosts: true})
	dev := f.Nodes()[0].Device
	ep := dev.Endpoint()
	if code, _ := raw(t, ep, http.MethodPost, "/redfish/v1/Managers/BMC_0/Actions/Manager.Reset",
		`{"ResetType":"GracefulRestart"}`); code != http.StatusNoContent {
		t.Fatalf("reset = %d", code)
	}
	c := client(t, ep)
	ctx := testCtx(t)
	// The shelf goes down: /redfish/v1 refuses connections ...
	var downErr error
	eventually(t, "service root goes away", func() bool {
		downErr = c.Alive(ctx)
		return downErr != nil
	})
	if !errors.Is(downErr, redfish.ErrUnreachable) && !errors.Is(downErr, redfish.ErrTransport) {
		t.Fatalf("while down: %v, want ErrUnreachable", downErr)
	}
	// ... and comes back.
	if err := c.WaitUp(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestShelf_ImmediateApplyTimeInstallsAndReboots(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Shelves: 1}, NoSwitchHosts: true})
	dev := f.Nodes()[0].Device
	ep := dev.Endpoint()
	c := client(t, ep)
	ctx := testCtx(t)
	if dev.ApplyTime() != "Immediate" {
		t.Fatalf("initial ApplyTime %q", dev.ApplyTime())
	}
	body := sim.FirmwareMagic + "PMC-9\n"
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // simulator
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+ep.Addr(443)+"/redfish/v1/UpdateService/update",
		strings.NewReader(body))
	req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusAccepted || !strings.HasPrefix(loc, "/redfish/v1/TaskService/Tasks/") {
		t.Fatalf("push = %d, Location %q", resp.StatusCode, loc)
	}
	if _, err := c.WaitTask(ctx, strings.TrimPrefix(loc, "/redfish/v1/TaskService/Tasks/"), nil); err != nil {
		t.Fatal(err)
	}
	// The install reboots the shelf controller by itself.
	eventually(t, "shelf rebooted after the install", func() bool { return dev.Boots() == 1 && dev.Reachable() })
	if v, _, _ := dev.Firmware("FW_PMC_0"); v != "PMC-9" {
		t.Fatalf("installed %q", v)
	}
	if len(dev.Resets()) != 0 {
		t.Fatalf("resets %v", dev.Resets())
	}
}

func TestLiteOn_ActionsDemandTheirActionInfoBody(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Shelves: 1}, NoSwitchHosts: true})
	ep := f.Nodes()[0].BMC
	const on = "/redfish/v1/Chassis/powershelf/Actions/Chassis.On"
	if code, body := raw(t, ep, http.MethodPost, on, `{}`); code != http.StatusBadRequest || body["error"] == nil {
		t.Fatalf("empty body = %d %v", code, body)
	}
	if code, _ := raw(t, ep, http.MethodPost, on, `{"ResetType":"On"}`); code != http.StatusBadRequest {
		t.Fatalf("wrong parameter = %d", code)
	}
	if code, _ := raw(t, ep, http.MethodPost, on, `{"OnType":"On"}`); code != http.StatusNoContent {
		t.Fatalf("right body = %d", code)
	}
	code, info := raw(t, ep, http.MethodGet, "/redfish/v1/Chassis/powershelf/OnActionInfo", "")
	params, _ := info["Parameters"].([]any)
	if code != http.StatusOK || len(params) != 1 {
		t.Fatalf("action info = %d %v", code, info)
	}
}

func TestDevice_WrongCredentialsGet401WithRedfishError(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	ep := f.Nodes()[0].BMC
	ep.Credentials = hw.UserPass(ep.Credentials.Username, "nope")
	code, body := raw(t, ep, http.MethodGet, "/redfish/v1", "")
	if code != http.StatusUnauthorized || body["error"] == nil {
		t.Fatalf("= %d %v", code, body)
	}
}

func TestDevice_UnknownResourceIs404(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1, Shelves: 1}, NoSwitchHosts: true})
	compute, shelf := f.Nodes()[0].BMC, f.Nodes()[1].BMC
	for _, tc := range []struct {
		ep   hw.Endpoint
		path string
	}{
		{compute, "/redfish/v1/PowerEquipment"},
		{compute, "/redfish/v1/Systems/System_1"},
		{shelf, "/redfish/v1/Systems"},
		{shelf, "/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0"},
	} {
		if code, _ := raw(t, tc.ep, http.MethodGet, tc.path, ""); code != http.StatusNotFound {
			t.Fatalf("%s = %d, want 404", tc.path, code)
		}
	}
}

func TestSwitchTray_BMCPowerCycleRebootsNVOSHost(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Switches: 1}})
	n := f.Nodes()[0]
	if n.Switch == nil {
		t.Fatal("switch tray has no NVOS host")
	}
	c := client(t, n.BMC)
	ctx := testCtx(t)
	if err := c.ResetSystem(ctx, redfish.ResetPowerCycle); err != nil {
		t.Fatal(err)
	}
	if code := nvueStatus(t, n.Host); code != 0 {
		t.Fatalf("nvue answered %d right after the tray power cycle", code)
	}
	eventually(t, "NVOS host comes back", func() bool { return nvueStatus(t, n.Host) == http.StatusOK })
	if err := c.WaitPowerState(ctx, redfish.PowerOn); err != nil {
		t.Fatal(err)
	}
}

func TestDevice_ConcurrentClientsAndKnobs(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 2, Shelves: 1}, NoSwitchHosts: true})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, n := range f.Nodes() {
		c := client(t, n.BMC)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 8; i++ {
					var err error
					if n.Type.Kind() == hw.KindPowerShelf {
						_, err = c.ShelfPowerState(ctx, redfish.ShelfLiteOn)
						if err == nil && i%3 == 0 {
							err = c.SetShelfPower(ctx, redfish.ShelfLiteOn, redfish.ShelfOn)
						}
					} else {
						_, err = c.SystemPowerState(ctx)
						if err == nil && i%3 == 0 {
							err = c.ResetSystem(ctx, redfish.ResetOn)
						}
					}
					if err != nil {
						errs <- err
						return
					}
					n.Device.SlowTasks(1)
					_ = n.Device.PowerState()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// eventually polls an observable condition of a device over the network
// (nothing a channel could signal) every 2 ms, failing after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out waiting: %s", what)
		case <-tick.C:
		}
	}
}

// Requests counts what reached the device, a 401 included, so a test can
// tell a node that was never contacted from one that was refused.
func TestRequestsCountsEveryAnsweredRequest(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	dev := f.Nodes()[0].Device
	if got := dev.Requests(); got != 0 {
		t.Fatalf("a new device counts %d requests", got)
	}
	ep := dev.Endpoint()
	if st, _ := raw(t, ep, http.MethodGet, "/redfish/v1/UpdateService/FirmwareInventory", ""); st != http.StatusOK {
		t.Fatalf("inventory: HTTP %d", st)
	}
	ep.Credentials = hw.UserPass("admin", "wrong")
	if st, _ := raw(t, ep, http.MethodGet, "/redfish/v1", ""); st != http.StatusUnauthorized {
		t.Fatalf("wrong password: HTTP %d", st)
	}
	if got := dev.Requests(); got != 2 {
		t.Fatalf("Requests() = %d after two requests", got)
	}
}

func TestSetFirmwareChangesTheInstalledVersion(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	dev := f.Nodes()[0].Device
	if err := dev.SetFirmware("FW_BMC_0", "GB200Nvl-99.01-1"); err != nil {
		t.Fatal(err)
	}
	st, item := raw(t, dev.Endpoint(), http.MethodGet, "/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0", "")
	if st != http.StatusOK || item["Version"] != "GB200Nvl-99.01-1" {
		t.Fatalf("FW_BMC_0 = HTTP %d %v", st, item)
	}
	if installed, staged, err := dev.Firmware("FW_BMC_0"); err != nil || installed != "GB200Nvl-99.01-1" || staged != "" {
		t.Fatalf("Firmware(FW_BMC_0) = %q, %q, %v", installed, staged, err)
	}
	if err := dev.SetFirmware("FW_NOPE_0", "1"); !errors.Is(err, sim.ErrUnknownComponent) {
		t.Fatalf("unknown component: %v", err)
	}
}
