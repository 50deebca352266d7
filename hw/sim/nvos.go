package sim

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// NVOSHosts is the default SwitchHostFactory: an nvossim switch (NVUE
// HTTPS with the fleet-issued certificate, SSH/SFTP) on the host address
// and ports of the spec.
func NVOSHosts(ctx context.Context, spec SwitchHostSpec) (SwitchHost, error) {
	var cert *tls.Certificate
	if len(spec.Certificate.Certificate) > 0 {
		cert = &spec.Certificate
	}
	sw, err := nvossim.New(nvossim.Config{
		HostName:       spec.NodeID,
		Username:       spec.Credentials.Username,
		Password:       spec.Credentials.Password,
		TimeScale:      spec.TimeScale,
		RebootDuration: spec.RebootDuration,
		NVUEPort:       spec.NVUEPort,
		SSHPort:        spec.SSHPort,
		NMXPort:        spec.NMXPort,
		GNMIPort:       spec.GNMIPort,
		Fabric:         spec.Fabric,
		Certificate:    cert,
		ChassisSerial:  spec.ChassisSerial,
		SlotNumber:     spec.SlotNumber,
		TrayIndex:      spec.TrayIndex,
		SerialNumber:   "MT" + spec.NodeID,
		Logger:         spec.Logger,
		Overlaps:       spec.Overlaps,
	})
	if err != nil {
		return nil, fmt.Errorf("nvos host %s: %w", spec.NodeID, err)
	}
	if err := sw.Start(ctx, spec.IP); err != nil {
		_ = sw.Close()
		return nil, fmt.Errorf("nvos host %s: %w", spec.NodeID, err)
	}
	return &NVOSHost{Switch: sw}, nil
}

// NVOSHost adapts an nvossim.Switch to SwitchHost; the embedded Switch
// gives tests its fault knobs.
type NVOSHost struct {
	*nvossim.Switch
}

// PowerCycle makes the NVOS host unreachable for downFor, as a tray power
// cycle does.
func (h *NVOSHost) PowerCycle(downFor time.Duration) { h.Switch.Unreachable(downFor) }

// darkWindow is "until power returns": longer than any simulation runs.
const darkWindow = 100 * 365 * 24 * time.Hour

// PowerOff takes the NVOS host down until PowerOn.
func (h *NVOSHost) PowerOff() { h.Switch.Unreachable(darkWindow) }

// PowerOn boots the host: it answers again after bootFor, with its
// installed firmware active. It also ends any Unreachable fault window
// opened on the switch before (nvossim cannot tell them apart).
func (h *NVOSHost) PowerOn(bootFor time.Duration) {
	h.Switch.PowerCycle(bootFor) // opens the boot window first: no gap
	h.Switch.Unreachable(0)
}
