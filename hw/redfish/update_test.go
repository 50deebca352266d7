package redfish_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func firmware(name, version string) redfish.Firmware {
	body := []byte(sim.FirmwareMagic + version + "\n" + strings.Repeat("x", 4096))
	return redfish.Firmware{FileName: name, Body: bytes.NewReader(body), Size: int64(len(body))}
}

func inventoryVersion(t *testing.T, c *redfish.Client, id string) string {
	t.Helper()
	inv, err := c.FirmwareInventory(testCtx(t))
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	for _, comp := range inv.Components {
		if comp.ID == id {
			return comp.Version
		}
	}
	t.Fatalf("component %s not in inventory", id)
	return ""
}

func TestComputeUpdate_InstalledOnlyAfterAuxPowerCycle(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	before := inventoryVersion(t, c, "FW_BMC_0")

	start, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{
		Targets: []string{redfish.FirmwareInventoryPath + "/FW_BMC_0"}, ForceUpdate: true,
		File: firmware("bmc.fwpkg", "GB200Nvl-25.09-1"),
	})
	if err != nil || start.TaskID == "" {
		t.Fatalf("upload: %+v, %v", start, err)
	}
	var seen []int
	task, err := c.WaitTask(ctx, start.TaskID, func(t redfish.Task) { seen = append(seen, t.Percent) })
	if err != nil || task.State != redfish.TaskCompleted || task.Percent != 100 {
		t.Fatalf("task = %+v, %v", task, err)
	}
	if len(seen) < 2 {
		t.Fatalf("progress reported %d times, want the running state first", len(seen))
	}
	if got := inventoryVersion(t, c, "FW_BMC_0"); got != before {
		t.Fatalf("installed version changed to %q before activation", got)
	}
	if _, staged, _ := dev.Firmware("FW_BMC_0"); staged != "GB200Nvl-25.09-1" {
		t.Fatalf("staged = %q", staged)
	}

	// GB200 activation: ForceOff, aux power cycle, BMC down and back, On.
	if err := c.ResetSystem(ctx, redfish.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	if err := c.AuxPowerCycle(ctx); err != nil {
		t.Fatalf("aux power cycle: %v", err)
	}
	if err := c.WaitDownUp(ctx); err != nil {
		t.Fatalf("bmc restart: %v", err)
	}
	if err := c.ResetSystem(ctx, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitPowerState(ctx, redfish.PowerOn); err != nil {
		t.Fatal(err)
	}
	if got := inventoryVersion(t, c, "FW_BMC_0"); got != "GB200Nvl-25.09-1" {
		t.Fatalf("installed after activation = %q", got)
	}
}

func TestComputeUpdate_HMCTargetsAllHGXComponents(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	start, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{
		Targets: []string{"/redfish/v1/Chassis/HGX_Chassis_0"}, File: firmware("hmc.fwpkg", "HGX-2"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitTask(ctx, start.TaskID, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"HGX_FW_BMC_0", "HGX_FW_GPU_3"} {
		if _, staged, _ := dev.Firmware(id); staged != "HGX-2" {
			t.Fatalf("%s staged = %q, want HGX-2", id, staged)
		}
	}
	if _, staged, _ := dev.Firmware("FW_BMC_0"); staged != "" {
		t.Fatalf("FW_BMC_0 staged %q by an HMC update", staged)
	}
}

func TestComputeUpdate_UnknownTargetRejected(t *testing.T) {
	f := startFleet(t, oneCompute())
	c := clientFor(t, newPool(t, fastOptions()), f.Devices()[0].Endpoint())
	_, err := c.StartMultipartUpdate(testCtx(t), redfish.MultipartUpdate{
		Targets: []string{redfish.FirmwareInventoryPath + "/FW_NOPE"}, File: firmware("x.bin", "1"),
	})
	if !errors.Is(err, redfish.ErrClient) {
		t.Fatalf("err = %v, want ErrClient (400)", err)
	}
}

func TestComputeUpdate_TaskExceptionIsTaskFailed(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	dev.FailNextTasks(1)
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	start, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{File: firmware("bmc.fwpkg", "bad")})
	if err != nil {
		t.Fatal(err)
	}
	task, err := c.WaitTask(ctx, start.TaskID, nil)
	var te *redfish.TaskError
	if !errors.Is(err, redfish.ErrTaskFailed) || !errors.As(err, &te) {
		t.Fatalf("err = %v, want *TaskError", err)
	}
	if task.RawState != "Exception" || task.Status != "Critical" || !strings.Contains(task.Message, "failed") {
		t.Fatalf("task = %+v", task)
	}
	if _, staged, _ := dev.Firmware("FW_BMC_0"); staged != "" {
		t.Fatalf("failed task staged %q", staged)
	}
}

func TestComputeUpdate_SlowTaskTimesOut(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	dev.SlowTasks(1000)
	o := fastOptions()
	o.TaskTimeout = 100 * time.Millisecond
	c := clientFor(t, newPool(t, o), dev.Endpoint())
	ctx := testCtx(t)
	start, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{File: firmware("bmc.fwpkg", "slow")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitTask(ctx, start.TaskID, nil); !errors.Is(err, redfish.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestComputeUpdate_TaskReadsSurviveShortOutage(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	start, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{File: firmware("bmc.fwpkg", "v2")})
	if err != nil {
		t.Fatal(err)
	}
	dev.Unreachable(30 * time.Millisecond)
	if task, err := c.WaitTask(ctx, start.TaskID, nil); err != nil || task.State != redfish.TaskCompleted {
		t.Fatalf("task = %+v, %v", task, err)
	}
}

func TestComputeUpdate_UploadUnauthenticated(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	ep := dev.Endpoint()
	dev.SetCredentials("admin", "other")
	c := clientFor(t, newPool(t, fastOptions()), ep)
	_, err := c.StartMultipartUpdate(testCtx(t), redfish.MultipartUpdate{File: firmware("bmc.fwpkg", "v2")})
	if !errors.Is(err, redfish.ErrUnauthenticated) {
		t.Fatalf("err = %v, want ErrUnauthenticated", err)
	}
}

func TestShelfUpdate_StagedUntilManagerReset(t *testing.T) {
	for _, typ := range []hw.NodeType{hw.PowerShelfGB200Liteon, hw.PowerShelfGB300Delta} {
		t.Run(typ.Name(), func(t *testing.T) {
			f := startFleet(t, sim.Layout{Shelves: 1, ShelfType: typ})
			dev := f.Devices()[0]
			c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
			ctx := testCtx(t)
			before := inventoryVersion(t, c, "FW_PMC_0")

			start, err := c.PushShelfFirmware(ctx, firmware("pmc.tar", "PMC-2.0.0"))
			if err != nil {
				t.Fatalf("push: %v", err)
			}
			if dev.ApplyTime() != redfish.ApplyOnReset {
				t.Fatalf("ApplyTime = %q, want OnReset", dev.ApplyTime())
			}
			if _, err := c.WaitTask(ctx, start.TaskID, nil); err != nil {
				t.Fatalf("task: %v", err)
			}
			if got := inventoryVersion(t, c, "FW_PMC_0"); got != before {
				t.Fatalf("installed before reset = %q, want %q", got, before)
			}
			if err := c.RestartManagerAndWait(ctx, false); err != nil {
				t.Fatalf("restart manager: %v", err)
			}
			if got := inventoryVersion(t, c, "FW_PMC_0"); got != "PMC-2.0.0" {
				t.Fatalf("installed after reset = %q", got)
			}
			if r := dev.Resets(); len(r) != 1 || r[0] != "BMC_0:GracefulRestart" {
				t.Fatalf("resets = %v", r)
			}
		})
	}
}

func TestShelfUpdate_ApplyTimeAlreadyOnResetIsNotPatchedTwice(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1})
	c := clientFor(t, newPool(t, fastOptions()), f.Devices()[0].Endpoint())
	ctx := testCtx(t)
	for i := 0; i < 2; i++ {
		if err := c.EnsureApplyOnReset(ctx); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	if got := f.Devices()[0].ApplyTime(); got != redfish.ApplyOnReset {
		t.Fatalf("ApplyTime = %q", got)
	}
}

func TestWaitDownUp_TimesOutWhenBMCNeverGoesDown(t *testing.T) {
	f := startFleet(t, oneCompute())
	o := fastOptions()
	o.LivenessTimeout = 60 * time.Millisecond
	c := clientFor(t, newPool(t, o), f.Devices()[0].Endpoint())
	if err := c.WaitDownUp(testCtx(t)); !errors.Is(err, redfish.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestManagerReset_RebootWindowMakesBMCUnreachable(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	if err := c.ResetManager(ctx, "BMC_0", redfish.ResetGracefulRestart); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitDownUp(ctx); err != nil {
		t.Fatalf("reboot window: %v", err)
	}
	if !dev.Reachable() {
		t.Fatal("device not reachable after the window")
	}
}

func TestShelfUpdate_HandoffShapeCountsAsCompleted(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1})
	dev := f.Devices()[0]
	dev.ShelfHandoffTasks(true)
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	start, err := c.PushShelfFirmware(ctx, firmware("pmc.tar", "PMC-3"))
	if err != nil {
		t.Fatal(err)
	}
	task, err := c.WaitTask(ctx, start.TaskID, nil)
	if err != nil || !task.ResetHandoff || task.State != redfish.TaskCompleted || task.RawState != "Cancelled" {
		t.Fatalf("task = %+v, %v; want a completed reset hand-off", task, err)
	}
	if err := c.RestartManagerAndWait(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := inventoryVersion(t, c, "FW_PMC_0"); got != "PMC-3" {
		t.Fatalf("installed after reset = %q", got)
	}
}

func TestWaitTask_CallerCancellationIsNotATimeout(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	dev.SlowTasks(1000)
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	start, err := c.StartMultipartUpdate(testCtx(t), redfish.MultipartUpdate{File: firmware("bmc.fwpkg", "v")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	// The caller gives up once it has seen the task running.
	_, err = c.WaitTask(ctx, start.TaskID, func(redfish.Task) { cancel() })
	if !errors.Is(err, context.Canceled) || errors.Is(err, redfish.ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled and not ErrTimeout", err)
	}
}
