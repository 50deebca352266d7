// Package sim is the rack simulator: whole GB200 NVL72-style racks of
// simulated BMCs (compute trays, switch-tray BMCs, LiteOn or Delta power
// shelves), each on its own loopback address and HTTPS listener, speaking
// the Redfish subset RMS uses (southbound §5.1, §5.2 and the switch BMC).
//
// Devices keep real state: power, installed and staged firmware per
// component, tasks that progress with (scaled) time and PSUs. Every device
// has fault knobs (wrong credentials, unreachable windows, reboot windows,
// failing and slow tasks, slow answers). All simulated durations are
// multiplied by Options.TimeScale, so a 10-minute flash takes 0.6 s at 0.001.
//
// Each rack has a power bus (power.go): its shelves feed its compute and
// switch trays, which go dark Timing.Discharge after the last shelf turns
// off and cold-boot when one comes back.
//
// State advances lazily when a device is asked (no polling goroutines); the
// only goroutines are one accept loop per listening device, the handlers of
// in-flight requests and one-shot timers that bring a rebooted device back.
// Fleet.Close stops and waits for all of them.
//
// The NVOS side of a switch tray lives in hw/sim/nvossim; a Fleet attaches
// one to every switch tray through Options.SwitchHosts, all on one NVUE
// port. BMCs and NVOS hosts present certificates from the fleet's CA
// (Fleet.CertPool).
package sim
