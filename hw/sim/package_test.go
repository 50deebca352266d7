package sim_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestFirmwarePackage_Layout(t *testing.T) {
	p := sim.FirmwarePackage("GB200Nvl-25.09-1", 4096)
	if len(p) != 4096 || !bytes.HasPrefix(p, []byte(sim.FirmwareMagic+"GB200Nvl-25.09-1\n")) {
		t.Fatalf("package of %d bytes starting %q", len(p), p[:32])
	}
	if short := sim.FirmwarePackage("1.2.3", 3); string(short) != sim.FirmwareMagic+"1.2.3\n" {
		t.Fatalf("a size below the header gives %q", short)
	}
}

func TestFirmwarePackage_FlashedDevicesReportItsVersion(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1, Shelves: 1}, NoSwitchHosts: true})
	ctx := testCtx(t)
	compute, shelf := f.Nodes()[0].Device, f.Nodes()[1].Device

	// The file name says otherwise: the header wins.
	pkg := sim.FirmwarePackage("GB200Nvl-25.09-1", 8192)
	c := client(t, compute.Endpoint())
	st, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{
		Targets: []string{redfish.FirmwareInventoryPath + "/FW_BMC_0"},
		File:    redfish.Firmware{FileName: "other-0.0.1.fwpkg", Body: bytes.NewReader(pkg), Size: int64(len(pkg))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitTask(ctx, st.TaskID, nil); err != nil {
		t.Fatal(err)
	}
	if _, staged, err := compute.Firmware("FW_BMC_0"); err != nil || staged != "GB200Nvl-25.09-1" {
		t.Fatalf("compute FW_BMC_0 staged %q, %v", staged, err)
	}

	// A raw push to a power shelf (no file name at all).
	pkg = sim.FirmwarePackage("PMC-1.3.0", 2048)
	code, body := raw(t, shelf.Endpoint(), http.MethodPost, "/redfish/v1/UpdateService/update", string(pkg))
	if code != http.StatusAccepted {
		t.Fatalf("shelf push = HTTP %d %v", code, body)
	}
	eventually(t, "shelf installed the package", func() bool {
		v, _, _ := shelf.Firmware("FW_PMC_0")
		return v == "PMC-1.3.0"
	})
}
