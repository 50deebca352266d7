package fwupdate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/messages"
)

func TestComputeUpdateActivatesAndReportsTheNewVersion(t *testing.T) {
	b := computeBench(t)
	const version = "GB200Nvl-25.09-1"
	p := Plan{Node: b.node, Activate: true, ExpectedAPs: []string{"fw_bmc_0", "HGX_FW_GPU_0"},
		Targets: []Target{{Component: "BMC", Target: "FW_BMC_0", File: b.pkg(t, "bmc.fwpkg", version), Version: version}}}
	rep := b.run(t, context.Background(), p)

	doc := completed(t, rep)
	if doc.Status != "completed" || doc.RackID != b.node.RackID || doc.NodeID != b.node.ID ||
		doc.TargetsCompleted != 1 || doc.TargetsSkipped != 0 || !doc.Activated ||
		doc.ActivationCount == nil || *doc.ActivationCount != 1 || doc.Check != "passed" || len(doc.Targets) != 1 {
		t.Fatalf("result = %+v", doc)
	}
	tr := doc.Targets[0]
	if tr.Component != "BMC" || tr.Target != "FW_BMC_0" || tr.FirmwareFile != "bmc.fwpkg" || tr.Status != "completed" ||
		tr.TaskID == "" || tr.Version != version {
		t.Fatalf("target = %+v", tr)
	}
	if got := b.installed(t, "FW_BMC_0"); got != version {
		t.Fatalf("FW_BMC_0 runs %q, want %q", got, version)
	}
	want := []string{
		"Uploading bmc.fwpkg for target BMC",
		"Polling firmware task " + tr.TaskID + " for target BMC",
		"Activating firmware on " + b.node.ID,
	}
	if strings.Join(rep.progress, "|") != strings.Join(want, "|") {
		t.Fatalf("progress = %q, want %q", rep.progress, want)
	}
	if n := count(b.device.Resets(), "AuxPowerCycle"); n != 1 {
		t.Fatalf("%d aux power cycles, want 1: %v", n, b.device.Resets())
	}
}

func TestAlreadyUpToDateUploadsNothing(t *testing.T) {
	b := computeBench(t)
	// The type rule: "BMC" stands for the node's BMC-type entries; the
	// version compares case-insensitively.
	current := strings.ToLower(b.installed(t, "FW_BMC_0"))
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "BMC", File: b.pkg(t, "bmc.fwpkg", current), Version: current}}}
	rep := b.run(t, context.Background(), p)

	doc := completed(t, rep)
	if doc.Status != "already_up_to_date" || doc.TargetsCompleted != 0 || doc.TargetsSkipped != 1 || doc.Activated ||
		*doc.ActivationCount != 0 || doc.Check != "skipped" || doc.Targets[0].Status != "already_up_to_date" ||
		doc.Targets[0].TaskID != "" {
		t.Fatalf("result = %+v", doc)
	}
	if rep.outcome.Description != "Firmware already up to date" {
		t.Fatalf("description = %q", rep.outcome.Description)
	}
	if n := b.device.Uploads(); n != 0 {
		t.Fatalf("the BMC got %d uploads, want none", n)
	}
	if len(b.device.Resets()) != 0 {
		t.Fatalf("the node was reset: %v", b.device.Resets())
	}
}

func TestForceUploadsAVersionTheNodeAlreadyRuns(t *testing.T) {
	b := computeBench(t)
	current := b.installed(t, "FW_UEFI_0")
	p := Plan{Node: b.node, Force: true,
		Targets: []Target{{Component: "BIOS", Target: "FW_UEFI_0", File: b.pkg(t, "uefi.fwpkg", current), Version: current}}}
	doc := completed(t, b.run(t, context.Background(), p))
	if doc.Status != "completed" || doc.TargetsCompleted != 1 || doc.Activated || doc.Check != "skipped" {
		t.Fatalf("result = %+v", doc)
	}
	if n := b.device.Uploads(); n != 1 {
		t.Fatalf("%d uploads, want 1", n)
	}
}

func TestFailingTaskFailsInThePollPhase(t *testing.T) {
	b := computeBench(t)
	b.device.FailNextTasks(1)
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "BMC", Target: "FW_BMC_0", File: b.pkg(t, "bmc.fwpkg", "BMC-9"), Version: "BMC-9"}}}
	rep := b.run(t, context.Background(), p)

	doc := failed(t, rep, messages.ErrorOther)
	if doc.Phase != "poll" || !strings.Contains(doc.ErrorMessage, "Installation of BMC-9 on FW_BMC_0 failed") ||
		doc.Target == nil || doc.Target.Component != "BMC" || doc.Target.FirmwareFile != "bmc.fwpkg" ||
		doc.Target.ExpectedVersion != "BMC-9" {
		t.Fatalf("result = %+v", doc)
	}
	if count(b.device.Resets(), "AuxPowerCycle") != 0 {
		t.Fatalf("a failed flash was activated: %v", b.device.Resets())
	}
}

func TestPowerShelfStagesOnResetAndActivatesByManagerReset(t *testing.T) {
	b := startBench(t, sim.Layout{Shelves: 1, ShelfType: hw.PowerShelfGB300Liteon})
	const version = "PMC-2.0.1"
	// "PowerShelfFW" classifies as no firmware type: its version is looked
	// for across the shelf's whole inventory.
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "PowerShelfFW", File: b.pkg(t, "pmc.tar", version), Version: version}}}
	rep := b.run(t, context.Background(), p)

	doc := completed(t, rep)
	if doc.Status != "completed" || *doc.ActivationCount != 1 || doc.Check != "passed" {
		t.Fatalf("result = %+v", doc)
	}
	if at := b.device.ApplyTime(); at != "OnReset" {
		t.Fatalf("ApplyTime = %q, want OnReset", at)
	}
	if got := b.installed(t, "FW_PMC_0"); got != version {
		t.Fatalf("FW_PMC_0 runs %q, want %q", got, version)
	}
	resets := b.device.Resets()
	if len(resets) != 1 || !strings.HasSuffix(resets[0], ":GracefulRestart") {
		t.Fatalf("resets = %v, want one manager GracefulRestart", resets)
	}
}

func TestMissingExpectedAPFailsValidationBeforeAnyUpload(t *testing.T) {
	b := computeBench(t)
	p := Plan{Node: b.node, Activate: true, ExpectedAPs: []string{"FW_BMC_0", "FW_NOPE_0"},
		Targets: []Target{{Component: "BMC", File: b.pkg(t, "bmc.fwpkg", "BMC-9"), Version: "BMC-9"}}}
	rep := b.run(t, context.Background(), p)

	doc := failed(t, rep, messages.ErrorFailedPrecondition)
	if doc.Phase != "validation" || !strings.Contains(doc.ErrorMessage, "missing FW_NOPE_0") ||
		!strings.Contains(doc.ErrorMessage, "present FW_BMC_0, FW_CPLD_0") {
		t.Fatalf("result = %+v", doc)
	}
	if n := b.device.Uploads(); n != 0 {
		t.Fatalf("%d uploads, want none", n)
	}
}

func TestCancelWhilePollingFailsCancelled(t *testing.T) {
	b := computeBench(t)
	b.device.SlowTasks(100000) // the flash would last over an hour and a half
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "BMC", Target: "FW_BMC_0", File: b.pkg(t, "bmc.fwpkg", "BMC-9"), Version: "BMC-9"}}}
	rep := newReporter()
	go func() {
		for step := range rep.steps {
			if strings.HasPrefix(step, "Polling firmware task ") {
				cancel()
				return
			}
		}
	}()
	b.runWith(t, ctx, p, rep)

	doc := failed(t, rep, messages.ErrorOther)
	if doc.Phase != "cancelled" || !strings.HasPrefix(rep.outcome.Message, "firmware update job cancelled while polling firmware task ") {
		t.Fatalf("result = %+v", doc)
	}
	if count(b.device.Resets(), "AuxPowerCycle") != 0 {
		t.Fatalf("a cancelled update was activated: %v", b.device.Resets())
	}
}

func TestCancelledBeforeStartingTouchesNothing(t *testing.T) {
	b := computeBench(t)
	before := b.device.Requests()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "BMC", File: b.pkg(t, "bmc.fwpkg", "BMC-9"), Version: "BMC-9"}}}
	rep := b.run(t, ctx, p)

	doc := failed(t, rep, messages.ErrorOther)
	if doc.Phase != "cancelled" || rep.outcome.Message != "firmware update job cancelled before starting the next target" {
		t.Fatalf("result = %+v, message %q", doc, rep.outcome.Message)
	}
	if got := b.device.Requests(); got != before {
		t.Fatalf("the BMC got %d requests", got-before)
	}
}

func TestSupermicroGB300ActivatesAfterEachMarkedTarget(t *testing.T) {
	b := startBench(t, sim.Layout{Compute: 1, ComputeType: hw.ComputeGB300Supermicro})
	p := Plan{Node: b.node, Activate: true, Targets: []Target{
		{Component: "HMC", File: b.pkg(t, "nosbios_HMC.fwpkg", "HMC-2"), Version: "HMC-2", ActivateAfter: true},
		{Component: "BIOS", Target: "FW_UEFI_0", File: b.pkg(t, "bios.fwpkg", "UEFI-2"), Version: "UEFI-2", ActivateAfter: true},
	}}
	rep := b.run(t, context.Background(), p)

	doc := completed(t, rep)
	if doc.Status != "completed" || doc.TargetsCompleted != 2 || *doc.ActivationCount != 2 || doc.Check != "passed" {
		t.Fatalf("result = %+v", doc)
	}
	if n := count(b.device.Resets(), "AuxPowerCycle"); n != 2 {
		t.Fatalf("%d aux power cycles, want 2: %v", n, b.device.Resets())
	}
	if n := count(rep.progress, "Activating firmware on "+b.node.ID); n != 2 {
		t.Fatalf("progress = %q", rep.progress)
	}
	if b.installed(t, "HGX_FW_GPU_0") != "HMC-2" || b.installed(t, "FW_UEFI_0") != "UEFI-2" {
		t.Fatal("the new versions are not installed")
	}
}

func TestActivationAtTheEndCoversEverythingFlashedSinceTheLast(t *testing.T) {
	b := computeBench(t)
	p := Plan{Node: b.node, Activate: true, Targets: []Target{
		{Component: "HMC", File: b.pkg(t, "nosbios_HMC.fwpkg", "HMC-3"), Version: "HMC-3", ActivateAfter: true},
		{Component: "BMC", Target: "FW_BMC_0", File: b.pkg(t, "bmc.fwpkg", "BMC-3"), Version: "BMC-3"},
		{Component: "BIOS", Target: "FW_UEFI_0", File: b.pkg(t, "bios.fwpkg", "UEFI-3"), Version: "UEFI-3"},
	}}
	doc := completed(t, b.run(t, context.Background(), p))
	if doc.TargetsCompleted != 3 || *doc.ActivationCount != 2 || doc.Check != "passed" {
		t.Fatalf("result = %+v", doc)
	}
}

func TestTargetsWithoutVersionAreUnverified(t *testing.T) {
	b := computeBench(t)
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "/redfish/v1/UpdateService/FirmwareInventory/FW_CPLD_0",
			Target: "/redfish/v1/UpdateService/FirmwareInventory/FW_CPLD_0", File: b.pkg(t, "cpld.bin", "CPLD-2")}}}
	doc := completed(t, b.run(t, context.Background(), p))
	if doc.Status != "completed" || *doc.ActivationCount != 1 || doc.Check != "unverified" || doc.Targets[0].Version != "" {
		t.Fatalf("result = %+v", doc)
	}
	if b.installed(t, "FW_CPLD_0") != "CPLD-2" {
		t.Fatal("CPLD not flashed")
	}
}

func TestVersionMismatchAfterActivationFails(t *testing.T) {
	b := computeBench(t)
	// The package installs BMC-4, but the plan expects BMC-5.
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "BMC", Target: "FW_BMC_0", File: b.pkg(t, "bmc.fwpkg", "BMC-4"), Version: "BMC-5"}}}
	rep := b.run(t, context.Background(), p)
	doc := failed(t, rep, messages.ErrorOther)
	if doc.Phase != "post_activation_version_check" || doc.Target == nil || doc.Target.ExpectedVersion != "BMC-5" ||
		!strings.Contains(doc.ErrorMessage, "component BMC expected version BMC-5, installed FW_BMC_0=BMC-4") {
		t.Fatalf("result = %+v", doc)
	}
}

func TestTaskBeyondItsTimeoutFailsWithTimeout(t *testing.T) {
	b := computeBench(t)
	b.device.SlowTasks(100000)
	b.deps.Timing.TaskTimeout = 50 * time.Millisecond
	p := Plan{Node: b.node, Targets: []Target{{Component: "BMC", File: b.pkg(t, "bmc.fwpkg", "BMC-9")}}}
	doc := failed(t, b.run(t, context.Background(), p), messages.ErrorTimeout)
	if doc.Phase != "poll" || !strings.Contains(doc.ErrorMessage, "did not finish within 50ms") {
		t.Fatalf("result = %+v", doc)
	}
}

func TestUnreadableTaskIsLostAfterTheGrace(t *testing.T) {
	b := computeBench(t)
	b.device.SlowTasks(100000)
	b.deps.Timing.TaskReadGrace = 20 * time.Millisecond
	p := Plan{Node: b.node, Targets: []Target{{Component: "BMC", File: b.pkg(t, "bmc.fwpkg", "BMC-9")}}}
	rep := newReporter()
	go func() {
		for step := range rep.steps {
			if strings.HasPrefix(step, "Polling firmware task ") {
				_ = b.device.SetUnreachable(true)
				return
			}
		}
	}()
	b.runWith(t, context.Background(), p, rep)
	doc := failed(t, rep, messages.ErrorClientError)
	if doc.Phase != "poll" || !strings.Contains(doc.ErrorMessage, "could not be read") {
		t.Fatalf("result = %+v", doc)
	}
}

func TestRefusedLoginFailsTheUpdateWithoutShowingThePassword(t *testing.T) {
	b := computeBench(t)
	b.device.SetCredentials("admin", "rotated-elsewhere")
	p := Plan{Node: b.node, Targets: []Target{{Component: "BMC", File: b.pkg(t, "bmc.fwpkg", "BMC-9")}}}
	doc := failed(t, b.run(t, context.Background(), p), messages.ErrorUnauthenticated)
	if doc.Phase != "update" {
		t.Fatalf("result = %+v", doc)
	}
}

func TestMissingFileFailsTheUpdate(t *testing.T) {
	b := computeBench(t)
	p := Plan{Node: b.node, Targets: []Target{{Component: "BMC", File: filepath.Join(b.dir, "gone.fwpkg")}}}
	doc := failed(t, b.run(t, context.Background(), p), messages.ErrorFileNotFound)
	if doc.Phase != "update" || doc.Target == nil || doc.Target.FirmwareFile != "gone.fwpkg" {
		t.Fatalf("result = %+v", doc)
	}
}

func TestPlanWithoutTargetsFailsValidation(t *testing.T) {
	b := computeBench(t)
	doc := failed(t, b.run(t, context.Background(), Plan{Node: b.node}), messages.ErrorInvalidArgument)
	if doc.Phase != "validation" || doc.Target != nil {
		t.Fatalf("result = %+v", doc)
	}
}

func TestShutdownDuringActivationLetsItFinishThenStops(t *testing.T) {
	b := computeBench(t)
	hard, stop := context.WithCancel(context.Background())
	defer stop()
	soft, shutdown := context.WithCancelCause(hard)
	defer shutdown(nil)
	const version = "BMC-7"
	p := Plan{Node: b.node, Activate: true,
		Targets: []Target{{Component: "BMC", Target: "FW_BMC_0", File: b.pkg(t, "bmc.fwpkg", version), Version: version}}}
	rep := newReporter()
	go func() {
		for step := range rep.steps {
			if strings.HasPrefix(step, "Activating firmware on ") {
				shutdown(messages.ErrShuttingDown)
				return
			}
		}
	}()
	b.runWith(t, messages.WorkflowContext(soft, hard), p, rep)

	doc := failed(t, rep, messages.ErrorOther)
	want := "firmware update job cancelled before the post-activation version check: rmsd is shutting down"
	if doc.Phase != "cancelled" || rep.outcome.Message != want {
		t.Fatalf("result = %+v, message %q", doc, rep.outcome.Message)
	}
	if b.installed(t, "FW_BMC_0") != version || b.device.PowerState() != "On" {
		t.Fatalf("activation did not finish: FW_BMC_0 %s, power %s", b.installed(t, "FW_BMC_0"), b.device.PowerState())
	}
}
