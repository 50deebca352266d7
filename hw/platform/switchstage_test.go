package platform_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

func stage(component, name string, size int) platform.FirmwareStage {
	return platform.FirmwareStage{Component: component, FileName: name, Body: bytes.NewReader(make([]byte, size)), Size: int64(size)}
}

// A stage the switch would not take is refused before any I/O (no host
// key policy: a dial would fail otherwise), with the rule in the message.
func TestSwitch_StageFirmwareRefusesBeforeAnyIO(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	d := fleetDeps(t, f)
	d.SSH.HostKey = sshsftp.HostKeyPolicy{}
	dev := device(t, d, f.Nodes()[0]).(platform.FirmwareStager)
	for _, c := range []struct {
		st   platform.FirmwareStage
		want error
		msg  string
	}{
		{stage("nic", "a.bin", 2048), platform.ErrInvalidSwitchComponent, `switch firmware component "nic" is not one of`},
		{stage("cpld0", "a.bin", 2048), platform.ErrInvalidSwitchComponent, "cpld<N>"},
		{stage("bmc", ".a.bin", 2048), platform.ErrInvalidFirmwareUpdate, "no leading dot"},
		{stage("bmc", "dir/a.bin", 2048), platform.ErrInvalidFirmwareUpdate, "only [A-Za-z0-9._-]"},
		{stage("bmc", "a.bin", 1023), platform.ErrInvalidFirmwareUpdate, "the file is 1023 bytes; a firmware file is at least 1024"},
		{platform.FirmwareStage{Component: "bmc", FileName: "a.bin", Size: 2048}, platform.ErrInvalidFirmwareUpdate, "no file body"},
	} {
		_, err := dev.StageFirmware(testCtx(t), c.st)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s/%s: %v, want %v with %q", c.st.Component, c.st.FileName, err, c.want, c.msg)
		}
	}
}

// A staged file of the same size is not sent again; transceiver and
// cpld<N> have their own directories.
func TestSwitch_StageFirmwareSkipsSameSize(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	n := f.Nodes()[0]
	sw := n.Switch.(*sim.NVOSHost)
	dev := device(t, fleetDeps(t, f), n).(platform.FirmwareStager)
	first := platform.FirmwareStage{Component: "CPLD2", FileName: "c.vme", Body: bytes.NewReader(bytes.Repeat([]byte{1}, 2048)), Size: 2048}
	got, err := dev.StageFirmware(testCtx(t), first)
	if err != nil || got != (platform.StagedFile{Path: "/host/fw-images/cpld/c.vme", Size: 2048}) {
		t.Fatalf("first stage: %+v, %v", got, err)
	}
	again := platform.FirmwareStage{Component: "cpld", FileName: "c.vme", Body: bytes.NewReader(bytes.Repeat([]byte{2}, 2048)), Size: 2048}
	got, err = dev.StageFirmware(testCtx(t), again)
	if err != nil || !got.Skipped {
		t.Fatalf("second stage: %+v, %v", got, err)
	}
	if data, _ := sw.File("/host/fw-images/cpld/c.vme"); !bytes.Equal(data, bytes.Repeat([]byte{1}, 2048)) {
		t.Fatal("the file was sent again")
	}
	if got, err := dev.StageFirmware(testCtx(t), stage("transceiver", "t.bin", 1024)); err != nil || got.Path != "/host/fw-images/transceiver/t.bin" {
		t.Fatalf("transceiver: %+v, %v", got, err)
	}
}
