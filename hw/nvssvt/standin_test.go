package nvssvt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
)

// standInNetwork keeps this package's simulated devices apart from other
// packages'.
const standInNetwork = 137

// standInRack is a small simulated rack and a runner of the stand-in.
type standInRack struct {
	fleet  *sim.Fleet
	runner *nvssvt.Runner
	nodes  map[hw.Kind]sim.Node
}

func startStandInRack(t *testing.T) *standInRack {
	t.Helper()
	fleet, err := sim.Start(context.Background(), sim.Options{Network: standInNetwork, NoSwitchHosts: true, TimeScale: 0.001,
		Layout: sim.Layout{Compute: 1, Switches: 1, Shelves: 1, ComputeType: hw.ComputeGB200Nvidia,
			SwitchType: hw.SwitchGB200Nvidia, ShelfType: hw.PowerShelfGB200Liteon}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	s := &standInRack{fleet: fleet, nodes: map[hw.Kind]sim.Node{},
		runner: nvssvt.New(nvssvt.Config{Path: testBinary(t), Args: []string{nvssvtsim.Command}, LogRoot: t.TempDir(), Timeout: 2 * time.Minute})}
	for _, n := range fleet.Nodes() {
		s.nodes[n.Type.Kind()] = n
	}
	return s
}

func (s *standInRack) scan(id string, kind hw.Kind) nvssvt.Scan {
	n := s.nodes[kind]
	return nvssvt.Scan{ID: id, NodeID: n.ID, BMC: n.BMC}
}

func checksByName(t *testing.T, rep *nvssvt.Report) map[string]nvssvt.Check {
	t.Helper()
	if len(rep.DUTs) != 1 {
		t.Fatalf("%d DUTs in the report", len(rep.DUTs))
	}
	out := map[string]nvssvt.Check{}
	for _, c := range rep.DUTs[0].Checks {
		out[c.Name] = c
	}
	return out
}

func TestStandInPassesAHealthySimulatedTray(t *testing.T) {
	s := startStandInRack(t)
	scan := s.scan("compute", hw.KindCompute)
	res, err := s.runner.Run(context.Background(), scan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Report.Status != nvssvt.StatusPass {
		t.Fatalf("exit %d, report %+v", res.ExitCode, res.Report)
	}
	checks := checksByName(t, res.Report)
	for _, name := range []string{"redfish_service_root", "systems", "power_state", "chassis", "firmware_inventory"} {
		if checks[name].Status != nvssvt.StatusPass {
			t.Errorf("%s: %+v", name, checks[name])
		}
	}
	if d := res.Report.DUTs[0]; d.ID != scan.NodeID || d.BMC != scan.BMC.Addr(443) {
		t.Errorf("DUT %q at %q", d.ID, d.BMC)
	}
	// What the stand-in was given, as it recorded it: the BMC address, no
	// credential.
	var argv []string
	readJSON(t, filepath.Join(res.LogDir, "argv.json"), &argv)
	if !slices.Contains(argv, scan.BMC.Addr(443)) {
		t.Errorf("argv %q lacks the BMC", argv)
	}
	for _, f := range []string{"argv.json", "stdout.log", "stderr.log", nvssvt.ReportFile} {
		b, err := os.ReadFile(filepath.Join(res.LogDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), scan.BMC.Credentials.Password.Reveal()) {
			t.Errorf("%s holds the BMC password", f)
		}
	}
}

func TestStandInSkipsWhatAPowerShelfLacks(t *testing.T) {
	s := startStandInRack(t)
	res, err := s.runner.Run(context.Background(), s.scan("shelf", hw.KindPowerShelf), nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := checksByName(t, res.Report)
	if res.Report.Status != nvssvt.StatusPass || checks["systems"].Status != nvssvt.StatusSkip || checks["chassis"].Status != nvssvt.StatusPass {
		t.Errorf("report %+v", res.Report)
	}
}

func TestStandInFailsChecksTheBMCFails(t *testing.T) {
	s := startStandInRack(t)
	t.Run("unreachable", func(t *testing.T) {
		dev := s.nodes[hw.KindCompute].Device
		if err := dev.SetUnreachable(true); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = dev.SetUnreachable(false) }()
		res, err := s.runner.Run(context.Background(), s.scan("unreachable", hw.KindCompute), nil)
		if err != nil {
			t.Fatal(err)
		}
		checks := checksByName(t, res.Report)
		if res.ExitCode != nvssvt.ExitChecksFailed || res.Report.Status != nvssvt.StatusFail ||
			checks["redfish_service_root"].Status != nvssvt.StatusFail || checks["power_state"].Status != nvssvt.StatusSkip {
			t.Errorf("exit %d, report %+v", res.ExitCode, res.Report)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		scan := s.scan("wrong-password", hw.KindSwitch)
		scan.BMC.Credentials = hw.UserPass("admin", "not-the-password")
		res, err := s.runner.Run(context.Background(), scan, nil)
		if err != nil {
			t.Fatal(err)
		}
		root := checksByName(t, res.Report)["redfish_service_root"]
		if root.Status != nvssvt.StatusFail || !strings.Contains(root.Message, "401") {
			t.Errorf("service root check %+v", root)
		}
	})
}

func TestStandInTakesTheConfigOverrideVerbatim(t *testing.T) {
	s := startStandInRack(t)
	scan := s.scan("override", hw.KindCompute)
	scan.ConfigOverride = `{"skip": ["firmware_inventory"], "note": "a b; $(c) 'd'"}`
	res, err := s.runner.Run(context.Background(), scan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := checksByName(t, res.Report)["firmware_inventory"]; c.Status != nvssvt.StatusSkip {
		t.Errorf("firmware_inventory %+v, want skipped by the override", c)
	}
	var argv []string
	readJSON(t, filepath.Join(res.LogDir, "argv.json"), &argv)
	i := slices.Index(argv, nvssvt.FlagConfigOverride)
	if i < 0 || i+1 >= len(argv) || argv[i+1] != scan.ConfigOverride {
		t.Errorf("argv %q does not carry the override as one argument", argv)
	}

	scan = s.scan("bad-override", hw.KindCompute)
	scan.ConfigOverride = "suite=quick"
	_, err = s.runner.Run(context.Background(), scan, nil)
	if !errors.Is(err, nvssvt.ErrExit) || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "--config-override") {
		t.Errorf("a malformed override: %v", err)
	}
}
