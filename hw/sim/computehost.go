package sim

import (
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/hostsim"
)

// DefaultHostUser and DefaultHostPassword are the host OS login of every
// compute host when Options.HostCredentials is empty: a sudoer, not root,
// as on a provisioned tray.
const (
	DefaultHostUser     = "ubuntu"
	DefaultHostPassword = "sim-host-password"
)

// startComputeHosts starts the host OS of every compute tray of rack r
// (Options.ComputeHosts): an SSH server answering the Mellanox tools
// (hw/sim/hostsim), on the addresses after every BMC and switch host of
// the rack. The host answers only while its tray's system is on; an aux
// power cycle or a cold boot of the tray activates what flint burned.
func (f *Fleet) startComputeHosts(rack *Rack, r int) error {
	o, l := f.opts, f.opts.Layout
	base := l.Compute + 2*l.Switches + l.Shelves
	i := 0
	for _, d := range rack.Devices {
		if d.kind != kindCompute {
			continue
		}
		i++
		h, err := hostsim.New(hostsim.Config{Credentials: o.HostCredentials,
			SystemOn: func() bool { return d.PowerState() == stateOn },
			Logger:   o.Logger.With().Str("device", d.id+"-host").Logger()})
		if err != nil {
			return err
		}
		ip := fmt.Sprintf("127.%d.%d.%d", o.Network+r/256, r%256, base+i)
		if err := h.Start(ip, 0); err != nil {
			return fmt.Errorf("start host of %s: %w", d.id, err)
		}
		d.mu.Lock()
		d.nic = h
		d.mu.Unlock()
	}
	return nil
}

// ComputeHost is the host OS of a compute tray (Options.ComputeHosts), or
// nil.
func (d *Device) ComputeHost() *hostsim.Host {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nic
}

// hostEndpoint is the host endpoint a node registers: a compute tray's
// host OS, else a switch tray's NVOS host; zero when it has neither.
func (d *Device) hostEndpoint() hw.Endpoint {
	d.mu.Lock()
	nic, host := d.nic, d.host
	d.mu.Unlock()
	switch {
	case nic != nil:
		return nic.Endpoint()
	case host != nil:
		return host.Endpoint()
	}
	return hw.Endpoint{}
}
