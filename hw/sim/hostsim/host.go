package hostsim

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"

	"github.com/rmsd/rmsd/hw"
)

// ErrNotLoopback is returned by Start for an address outside 127.0.0.0/8.
var ErrNotLoopback = errors.New("hostsim: listen address must be an IPv4 loopback address")

// Family is an adapter family as mst status -v names its device type.
type Family string

// The adapter families of a GB200 compute tray.
const (
	ConnectX7  Family = "ConnectX7"
	ConnectX8  Family = "ConnectX8"
	BlueField3 Family = "BlueField3"
)

// NIC is one adapter of the host.
type NIC struct {
	Family  Family
	PSID    string
	Version string // running and on flash at start
}

// DefaultNICs is a GB200 compute tray's set: four ConnectX-7 and one
// BlueField-3.
func DefaultNICs() []NIC {
	cx7 := NIC{Family: ConnectX7, PSID: "MT_0000000838", Version: "28.39.1002"}
	return []NIC{cx7, cx7, cx7, cx7, {Family: BlueField3, PSID: "MT_0000001093", Version: "32.39.1002"}}
}

// Config describes a host. Zero fields take defaults.
type Config struct {
	// Credentials are the login the host accepts (required).
	Credentials hw.Credentials
	// NICs are its adapters (default DefaultNICs()).
	NICs []NIC
	// SystemOn tells whether the tray's system power is on; the host
	// answers SSH only then. Nil means always on. It is called without
	// the host's lock held.
	SystemOn func() bool
	// NoSudo makes the login a user that is not in the sudoers file.
	NoSudo bool
	Logger zerolog.Logger
}

// device is one adapter's state.
type device struct {
	family  Family
	path    string
	pci     string
	psid    string
	flash   string
	running string
}

// Host is one simulated compute host. Methods are safe for concurrent use.
type Host struct {
	cfg    Config
	log    zerolog.Logger
	signer ssh.Signer

	mu        sync.Mutex
	devices   []*device
	files     map[string][]byte
	dirs      map[string]bool
	mstLoaded bool
	nextTemp  int
	burns     []string
	commands  []string
	failBurns int  // burns that fail before one succeeds again
	lost      bool // the adapters are off the PCIe bus until the next power cycle

	ln     net.Listener
	ip     string
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// New builds a host; Start makes it listen.
func New(cfg Config) (*Host, error) {
	if len(cfg.NICs) == 0 {
		cfg.NICs = DefaultNICs()
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("hostsim: host key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("hostsim: host key: %w", err)
	}
	h := &Host{cfg: cfg, log: cfg.Logger, signer: signer, files: map[string][]byte{},
		dirs: map[string]bool{"/": true, "/tmp": true, "/root": true, "/home": true}, conns: map[net.Conn]struct{}{}}
	counts := map[Family]int{}
	for i, n := range cfg.NICs {
		dev := deviceName(n.Family)
		k := counts[n.Family]
		counts[n.Family]++
		h.devices = append(h.devices, &device{family: n.Family, psid: n.PSID, flash: n.Version, running: n.Version,
			path: fmt.Sprintf("/dev/mst/%s_pciconf%d", dev, k), pci: fmt.Sprintf("%04x:01:00.0", i)})
	}
	return h, nil
}

// deviceName is the MST device name of a family.
func deviceName(f Family) string {
	switch f {
	case ConnectX8:
		return "mt4131"
	case BlueField3:
		return "mt41692"
	default:
		return "mt4129"
	}
}

// Start listens for SSH on ip:port (port 0 picks a free one).
func (h *Host) Start(ip string, port int) error {
	if p := net.ParseIP(ip); p == nil || p.To4() == nil || !p.IsLoopback() {
		return fmt.Errorf("%w: %s", ErrNotLoopback, ip)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("hostsim: listen: %w", err)
	}
	h.mu.Lock()
	h.ln, h.ip = ln, ip
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.serve(ln)
	}()
	return nil
}

// Endpoint is the host's SSH endpoint with the credentials it accepts.
func (h *Host) Endpoint() hw.Endpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	port := 0
	if h.ln != nil {
		port = h.ln.Addr().(*net.TCPAddr).Port
	}
	return hw.Endpoint{IP: h.ip, Port: port, Credentials: h.cfg.Credentials}
}

// Close stops the host and waits for its goroutines.
func (h *Host) Close() error {
	h.mu.Lock()
	h.closed = true
	ln := h.ln
	for c := range h.conns {
		_ = c.Close()
	}
	h.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	h.wg.Wait()
	return nil
}

// Activate is a power cycle of the tray: every adapter runs what is on its
// flash, and the MST modules are unloaded.
func (h *Host) Activate() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.devices {
		d.running = d.flash
	}
	h.mstLoaded, h.lost = false, false
}

// LoseDevices takes every adapter off the PCIe bus until the next power
// cycle (Activate): mst status lists none, as after a failed link
// training that only an AC cycle clears.
func (h *Host) LoseDevices() {
	h.mu.Lock()
	h.lost = true
	h.mu.Unlock()
}

// DeviceState is one adapter as a test observes it.
type DeviceState struct {
	Family  Family
	Path    string
	PSID    string
	Flash   string
	Running string
}

// Devices returns the adapters, by device path.
func (h *Host) Devices() []DeviceState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]DeviceState, 0, len(h.devices))
	for _, d := range h.devices {
		out = append(out, DeviceState{Family: d.family, Path: d.path, PSID: d.psid, Flash: d.flash, Running: d.running})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Burns returns the device paths flint burned, in order.
func (h *Host) Burns() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.burns...)
}

// Commands returns every command line run over SSH, oldest first.
func (h *Host) Commands() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.commands...)
}

// Files lists the paths of the files on the host.
func (h *Host) Files() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.files))
	for p := range h.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// FailBurns makes the next n flint burns fail as a flash write error does.
func (h *Host) FailBurns(n int) {
	h.mu.Lock()
	h.failBurns = n
	h.mu.Unlock()
}

// Image is a simulated firmware image holding version for adapters of psid.
func Image(psid, version string) []byte {
	return []byte(fmt.Sprintf("NVIDIA simulated ConnectX firmware image\nPSID: %s\nFW Version: %s\n", psid, version))
}
