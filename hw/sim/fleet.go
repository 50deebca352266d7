package sim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/sim/overlap"
	"github.com/rs/zerolog"
)

// SwitchHost is the NVOS side of a switch tray (NVUE + SSH), started by a
// SwitchHostFactory next to the tray's BMC.
type SwitchHost interface {
	// Endpoint is the NVUE endpoint with the credentials it accepts.
	Endpoint() hw.Endpoint
	// PowerCycle tells the host its tray lost power: it must be unreachable
	// for downFor (wall-clock) and then come back.
	PowerCycle(downFor time.Duration)
	// PowerOff tells the host its tray has no power: it must be
	// unreachable until PowerOn.
	PowerOff()
	// PowerOn tells the host power is back: it boots and answers again
	// after bootFor (wall-clock).
	PowerOn(bootFor time.Duration)
	// Close stops the host and waits for its goroutines.
	Close() error
}

// SwitchHostSpec describes the switch tray a SwitchHostFactory starts.
type SwitchHostSpec struct {
	NodeID   string
	RackID   string
	Type     hw.NodeType
	IP       string // loopback address reserved for the host
	NVUEPort int    // 0 = ephemeral
	SSHPort  int    // 0 = ephemeral
	NMXPort  int    // NMX-C gRPC; 0 = ephemeral
	GNMIPort int    // gNMI; 0 = ephemeral
	// Fabric is the rack as the switch's fabric manager sees it.
	Fabric nvossim.FabricModel
	// Certificate is the NVUE server certificate, issued by the fleet CA
	// for IP and NodeID (Fleet.CertPool verifies it); empty with
	// Options.FactorySwitchCertificates: the host makes a self-signed one.
	Certificate tls.Certificate
	Credentials hw.Credentials
	TimeScale   float64
	// RebootDuration is the (simulated) outage of a reboot NVOS performs
	// itself: Timing.NVOSReboot.
	RebootDuration time.Duration
	ChassisSerial  string
	SlotNumber     int
	TrayIndex      int
	Logger         zerolog.Logger
	// Overlaps records the host's mutating requests as acting on NodeID
	// (the fleet's recorder; nil records nothing).
	Overlaps *overlap.Recorder
}

// SwitchHostFactory starts the NVOS host of one switch tray.
type SwitchHostFactory func(ctx context.Context, spec SwitchHostSpec) (SwitchHost, error)

// Node is one simulated node as RMS would register it.
type Node struct {
	ID     string
	RackID string
	Type   hw.NodeType
	// BMC is the Redfish endpoint with the credentials it accepts now.
	BMC hw.Endpoint
	// Host is the NVOS (NVUE/SSH) endpoint of a switch tray, or the host
	// OS (SSH) of a compute tray with Options.ComputeHosts; zero when the
	// node has no host.
	Host hw.Endpoint
	// Device is the simulated BMC, for fault knobs and observations.
	Device *Device
	// Switch is the NVOS host of a switch tray, or nil.
	Switch SwitchHost
}

// Rack is one simulated rack.
type Rack struct {
	ID      string
	Devices []*Device // compute trays, switch-tray BMCs, power shelves, in that order
	bus     *bus
}

// Fleet is a running set of simulated racks.
type Fleet struct {
	opts  Options
	ca    *authority
	racks []*Rack
	byID  map[string]*Device
	// nvuePort is the port NVOS hosts are started on: Options.NVUEPort, or
	// the free port the first host picked when that is 0.
	nvuePort int
	// sshPort is the same for SSH (Options.SSHPort), when hosts tell it
	// (sshPorter).
	sshPort int
	// nmxPort and gnmiPort are the same for NMX-C and gNMI (fabricPorter).
	nmxPort, gnmiPort int
	// overlaps records every device's mutating requests by holder.
	overlaps *overlap.Recorder

	mu     sync.Mutex
	closed bool
}

// sharedPortAttempts bounds how often Start begins again when the NVUE or
// SSH port the first NVOS host picked is taken on another host's address.
const sharedPortAttempts = 5

// Start brings up every device of opts.Racks racks. On error, everything
// started so far is closed again.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		f, err := start(ctx, opts)
		shared := opts.SwitchHosts != nil && (opts.NVUEPort == 0 || opts.SSHPort == 0 || opts.NMXPort == 0 || opts.GNMIPort == 0)
		if err == nil || !shared || !errors.Is(err, syscall.EADDRINUSE) || attempt == sharedPortAttempts {
			return f, err
		}
	}
}

func start(ctx context.Context, opts Options) (*Fleet, error) {
	ca, err := newAuthority()
	if err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	f := &Fleet{opts: opts, ca: ca, byID: map[string]*Device{}, nvuePort: opts.NVUEPort, sshPort: opts.SSHPort,
		nmxPort: opts.NMXPort, gnmiPort: opts.GNMIPort, overlaps: newOverlapRecorder(opts.Logger)}
	handler := newMux()
	for r := 0; r < opts.Racks; r++ {
		if err := ctx.Err(); err != nil {
			f.Close()
			return nil, fmt.Errorf("start simulator: %w", err)
		}
		rack, err := f.startRack(ctx, r, handler)
		f.racks = append(f.racks, rack)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("start simulator rack %d: %w", r+1, err)
		}
	}
	opts.Logger.Info().Int("racks", opts.Racks).Int("devices", len(f.byID)).Float64("time_scale", opts.TimeScale).
		Msg("simulator started")
	return f, nil
}

func (f *Fleet) startRack(ctx context.Context, r int, mux *http.ServeMux) (*Rack, error) {
	o, l := f.opts, f.opts.Layout
	rack := &Rack{ID: fmt.Sprintf("rack-%03d", r+1), bus: &bus{}}
	slot := 0 // last used host octet
	add := func(kind deviceKind, typ hw.NodeType, name string, i, traySlot int) (*Device, error) {
		slot++
		ip := fmt.Sprintf("127.%d.%d.%d", o.Network+r/256, r%256, slot)
		d := &Device{
			id: fmt.Sprintf("%s-%s-%02d", rack.ID, name, i+1), rackID: rack.ID, typ: typ, kind: kind, ip: ip,
			mac:  fmt.Sprintf("02:%02x:%02x:%02x:00:%02x", o.Network&0xff, (r>>8)&0xff, r&0xff, slot),
			slot: traySlot, index: i, opts: &f.opts, port: o.Port,
			user: o.Credentials.Username, pass: o.Credentials.Password.Reveal(),
			timers: map[*time.Timer]struct{}{}, bus: rack.bus, powered: true, overlaps: f.overlaps,
		}
		d.life, d.cancel = context.WithCancel(context.Background())
		if kind == kindShelfLiteOn || kind == kindShelfDelta {
			rack.bus.feeding = append(rack.bus.feeding, true)
		} else {
			rack.bus.trays = append(rack.bus.trays, d)
		}
		d.serial = fmt.Sprintf("SIM%03d%s%02d", r+1, name[:2], i+1)
		d.log = o.Logger.With().Str("device", d.id).Logger()
		d.handler = d.serve(mux)
		cert, err := f.ca.issue(int64(r)<<16|int64(slot)+2, ip)
		if err != nil {
			return nil, err
		}
		d.tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		d.initState()
		rack.Devices = append(rack.Devices, d)
		f.byID[d.id] = d
		d.mu.Lock()
		err = d.startLocked()
		d.mu.Unlock()
		return d, err
	}
	firstSwitchSlot := min(10, l.Compute) + 1
	for i := 0; i < l.Compute; i++ {
		traySlot := i + 1
		if i >= 10 {
			traySlot += l.Switches
		}
		if _, err := add(kindCompute, l.ComputeType, "compute", i, traySlot); err != nil {
			return rack, err
		}
	}
	var switches []*Device
	var model nvossim.FabricModel
	for _, d := range rack.Devices {
		model.Computes = append(model.Computes, nvossim.FabricTray{ChassisSerial: d.rackSerial(), SlotNumber: d.slot, TrayIndex: d.index})
	}
	for j := 0; j < l.Switches; j++ {
		d, err := add(kindSwitchBMC, l.SwitchType, "switch", j, firstSwitchSlot+j)
		if err != nil {
			return rack, err
		}
		switches = append(switches, d)
		model.Switches = append(model.Switches, nvossim.FabricTray{ChassisSerial: d.rackSerial(), SlotNumber: d.slot, TrayIndex: j})
	}
	shelfKind := kindShelfLiteOn
	if l.ShelfType == hw.PowerShelfGB200Delta || l.ShelfType == hw.PowerShelfGB300Delta {
		shelfKind = kindShelfDelta
	}
	for k := 0; k < l.Shelves; k++ {
		if _, err := add(shelfKind, l.ShelfType, "powershelf", k, k+1); err != nil {
			return rack, err
		}
	}
	if o.ComputeHosts {
		if err := f.startComputeHosts(rack, r); err != nil {
			return rack, err
		}
	}
	if o.SwitchHosts == nil {
		return rack, nil
	}
	for j, d := range switches {
		slot++
		ip := fmt.Sprintf("127.%d.%d.%d", o.Network+r/256, r%256, slot)
		var cert tls.Certificate
		if !o.FactorySwitchCertificates {
			var err error
			if cert, err = f.ca.issue(int64(r)<<16|int64(slot)+2, ip, d.id); err != nil {
				return rack, err
			}
		}
		spec := SwitchHostSpec{
			NodeID: d.id, RackID: rack.ID, Type: d.typ, IP: ip,
			NVUEPort: f.nvuePort, SSHPort: f.sshPort, NMXPort: f.nmxPort, GNMIPort: f.gnmiPort, Certificate: cert, Fabric: model,
			Credentials: o.Credentials, TimeScale: o.TimeScale, RebootDuration: o.Timing.NVOSReboot,
			ChassisSerial: d.rackSerial(), SlotNumber: d.slot, TrayIndex: j,
			Logger: o.Logger.With().Str("device", d.id+"-nvos").Logger(), Overlaps: f.overlaps,
		}
		host, err := o.SwitchHosts(ctx, spec)
		if err != nil {
			return rack, fmt.Errorf("start nvos host of %s: %w", d.id, err)
		}
		if f.nvuePort == 0 {
			f.nvuePort = host.Endpoint().Port // every later host shares it
		}
		if sp, ok := host.(sshPorter); ok && f.sshPort == 0 {
			f.sshPort = sp.SSHPort()
		}
		if fp, ok := host.(fabricPorter); ok {
			if f.nmxPort == 0 {
				f.nmxPort = fp.NMXPort()
			}
			if f.gnmiPort == 0 {
				f.gnmiPort = fp.GNMIPort()
			}
		}
		d.mu.Lock()
		d.host = host
		d.mu.Unlock()
	}
	return rack, nil
}

// Racks returns the racks in order.
func (f *Fleet) Racks() []*Rack { return append([]*Rack(nil), f.racks...) }

// Devices returns every device, rack by rack.
func (f *Fleet) Devices() []*Device {
	var out []*Device
	for _, r := range f.racks {
		out = append(out, r.Devices...)
	}
	return out
}

// Device returns the device with the given node id.
func (f *Fleet) Device(id string) (*Device, bool) {
	d, ok := f.byID[id]
	return d, ok
}

// Nodes returns every node with its current endpoints, rack by rack.
func (f *Fleet) Nodes() []Node {
	var out []Node
	for _, d := range f.Devices() {
		n := Node{ID: d.id, RackID: d.rackID, Type: d.typ, BMC: d.Endpoint(), Device: d, Host: d.hostEndpoint()}
		d.mu.Lock()
		n.Switch = d.host
		d.mu.Unlock()
		out = append(out, n)
	}
	return out
}

// CertPool holds the CA that signed every device certificate (BMCs and
// NVOS hosts), for clients that verify them.
func (f *Fleet) CertPool() *x509.CertPool { return f.ca.pool }

// NVUEPort is the NVUE port every NVOS host listens on, or 0 when the
// fleet has no hosts or they listen on different ports (a SwitchHosts
// factory may ignore the port it is given).
func (f *Fleet) NVUEPort() int {
	port := 0
	for _, n := range f.Nodes() {
		switch {
		case n.Switch == nil:
		case port == 0:
			port = n.Host.Port
		case n.Host.Port != port:
			return 0
		}
	}
	return port
}

// sshPorter is a SwitchHost that tells its SSH port (NVOSHost does).
type sshPorter interface{ SSHPort() int }

// SSHPort is the SSH port every NVOS host listens on, or 0 when the fleet
// has no hosts, a host does not tell its port or they listen on different
// ports.
func (f *Fleet) SSHPort() int {
	port := 0
	for _, n := range f.Nodes() {
		if n.Switch == nil {
			continue
		}
		sp, ok := n.Switch.(sshPorter)
		switch {
		case !ok || (port != 0 && sp.SSHPort() != port):
			return 0
		case port == 0:
			port = sp.SSHPort()
		}
	}
	return port
}

// fabricPorter is a SwitchHost that tells its NMX-C and gNMI ports
// (NVOSHost does).
type fabricPorter interface {
	NMXPort() int
	GNMIPort() int
}

// NMXPort is the NMX-C port every NVOS host listens on, or 0 when the
// fleet has no hosts, a host does not tell its port or they differ.
func (f *Fleet) NMXPort() int { return f.sharedPort(fabricPorter.NMXPort) }

// GNMIPort is the same as NMXPort for gNMI.
func (f *Fleet) GNMIPort() int { return f.sharedPort(fabricPorter.GNMIPort) }

func (f *Fleet) sharedPort(of func(fabricPorter) int) int {
	port := 0
	for _, n := range f.Nodes() {
		if n.Switch == nil {
			continue
		}
		fp, ok := n.Switch.(fabricPorter)
		switch {
		case !ok || (port != 0 && of(fp) != port):
			return 0
		case port == 0:
			port = of(fp)
		}
	}
	return port
}

// Scale converts a simulated duration to wall-clock time.
func (f *Fleet) Scale(d time.Duration) time.Duration { return f.opts.scale(d) }

// Close stops every device and host and waits for all their goroutines.
// It is safe to call more than once.
func (f *Fleet) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, d := range f.Devices() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.close()
		}()
	}
	wg.Wait()
	f.logOverlaps()
}
