package sim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/hostsim"
	"github.com/rmsd/rmsd/hw/sim/overlap"
	"github.com/rs/zerolog"
)

// deviceKind selects the Redfish personality of a device.
type deviceKind int

const (
	kindCompute deviceKind = iota + 1
	kindSwitchBMC
	kindShelfLiteOn
	kindShelfDelta
)

// Device is one simulated BMC: a Redfish service on its own loopback
// address. All methods are safe for concurrent use.
type Device struct {
	id     string
	rackID string
	typ    hw.NodeType
	kind   deviceKind
	ip     string
	mac    string
	slot   int // tray slot number (compute) or position in the rack
	index  int // index among devices of the same kind in the rack
	serial string

	opts    *Options
	tlsCfg  *tls.Config
	handler http.Handler
	log     zerolog.Logger
	wg      sync.WaitGroup // serve loops, handlers and timer callbacks
	// overlaps records the device's mutating requests (the fleet's).
	overlaps *overlap.Recorder
	// life ends when the device closes (cancel): a reboot's reply grace
	// ends with it.
	life   context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	port    int
	user    string
	pass    string
	closing bool
	srv     *http.Server
	ln      net.Listener
	up      bool
	quiet   *silence // a dark tray's silent listener (see dark.go)
	held    bool     // SetUnreachable(true): stays down until released
	timers  map[*time.Timer]struct{}
	latency time.Duration
	failN   int  // next N tasks end in Exception
	failAll bool // every task ends in Exception
	slow    float64
	boots   int // reboots so far
	// requests counts the Redfish requests the device received while
	// listening, refused ones (401) included.
	requests int
	handoff  bool   // shelves: finished OnReset tasks show the hand-off shape
	wp       bool   // chassis hardware write protection
	bgCopy   string // chassis background copy status
	state    deviceState
	host     SwitchHost    // NVOS side of a switch tray, if any
	nic      *hostsim.Host // host OS of a compute tray (Options.ComputeHosts), if any
	// topology overrides MNNVLinkTopology keys (compute); empty: key left out.
	topology map[string]json.RawMessage

	// Power (see power.go).
	bus         *bus      // the rack's power bus; trays are fed by it, shelves feed it
	powered     bool      // the device has power (always true for shelves)
	discharging bool      // the bus is dead, the tray is running down
	feedGen     uint64    // bumped on every bus change; stale discharge timers see it
	epoch       uint64    // bumped on power loss and cold boot; voids pending reboots
	faultUntil  time.Time // end of the latest Unreachable window
	bootUntil   time.Time // end of the current boot (reboot, aux cycle, cold boot)
	failPowerOn bool      // shelves: power-on actions are accepted and ignored
}

// ID returns the node id, e.g. "rack-001-compute-01".
func (d *Device) ID() string { return d.id }

// RackID returns the id of the device's rack.
func (d *Device) RackID() string { return d.rackID }

// Type returns the node type.
func (d *Device) Type() hw.NodeType { return d.typ }

// IP returns the loopback address the device listens on.
func (d *Device) IP() string { return d.ip }

// Endpoint returns the BMC endpoint with the credentials the device
// currently accepts.
func (d *Device) Endpoint() hw.Endpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	return hw.Endpoint{IP: d.ip, MAC: d.mac, Port: d.port, Credentials: hw.UserPass(d.user, d.pass)}
}

// startLocked binds the listener (the first time on Options.Port, later on the
// port it got) and serves. Caller holds d.mu.
func (d *Device) startLocked() error {
	if d.closing {
		return ErrClosed
	}
	if d.up {
		return nil
	}
	d.unsilenceLocked()
	addr := net.JoinHostPort(d.ip, strconv.Itoa(d.port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("device %s listen %s: %w", d.id, addr, err)
	}
	d.port = ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{
		Handler:           d.handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	d.srv, d.ln, d.up = srv, ln, true
	tl := tls.NewListener(ln, d.tlsCfg)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		_ = srv.Serve(tl) // returns when the server is closed
	}()
	return nil
}

// stopLocked closes the listener and every connection: to a client the
// device is gone (connections refused). Caller holds d.mu.
func (d *Device) stopLocked() {
	if !d.up {
		return
	}
	// Close the listener here, synchronously: srv.Close only knows it once
	// the Serve goroutine has started, and until then the kernel would
	// keep completing handshakes.
	_ = d.ln.Close()
	_ = d.srv.Close()
	d.srv, d.ln, d.up = nil, nil, false
}

// replyGrace bounds how long a rebooting device still lets the requests it
// is handling finish; those arrived before it went down. It is generous so
// that a loaded machine still gets a request's rest written and answered;
// closing the device ends it at once.
const replyGrace = 10 * time.Second

// goDownLocked takes the device off the network for a reboot: no new
// connection is accepted from now on, idle ones are closed, and the
// requests in hand (the reset that caused the reboot among them) still get
// their replies, as a real BMC answers the reset before it restarts. A
// handler that holds d.mu unlocks before its reply is flushed, so closing
// every connection at once here would lose that reply to a race with the
// client (it read EOF instead of 204). Caller holds d.mu.
func (d *Device) goDownLocked() {
	if !d.up {
		return
	}
	_ = d.ln.Close()
	srv := d.srv
	d.srv, d.ln, d.up = nil, nil, false
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		ctx, cancel := context.WithTimeout(d.life, replyGrace)
		defer cancel()
		_ = srv.Shutdown(ctx) // waits for the requests in hand
		_ = srv.Close()
	}()
}

// afterLocked runs fn (with d.mu held) after wall-clock duration w, unless
// the device closes first. Caller holds d.mu.
func (d *Device) afterLocked(w time.Duration, fn func()) {
	if d.closing {
		return
	}
	var t *time.Timer
	d.wg.Add(1)
	t = time.AfterFunc(w, func() {
		defer d.wg.Done()
		d.mu.Lock()
		defer d.mu.Unlock()
		if _, pending := d.timers[t]; !pending {
			return // cancelled by close
		}
		delete(d.timers, t)
		if !d.closing {
			fn()
		}
	})
	d.timers[t] = struct{}{}
}

// rebootLocked keeps answering for delay, then goes down for downFor, then
// comes back, running onBack (if any) with d.mu held. A power loss in
// between voids the reboot. Caller holds d.mu.
func (d *Device) rebootLocked(delay, downFor time.Duration, onBack func()) {
	epoch := d.epoch
	goDown := func() {
		if d.epoch != epoch {
			return
		}
		d.goDownLocked()
		d.boots++
		if until := time.Now().Add(downFor); until.After(d.bootUntil) {
			d.bootUntil = until
		}
		d.log.Info().Dur("down_for_ms", downFor).Msg("device rebooting")
		d.afterLocked(downFor, func() {
			if d.epoch != epoch {
				return
			}
			if onBack != nil {
				onBack()
			}
			_ = d.serveIfReadyLocked(time.Now()) // logged there
		})
	}
	if delay <= 0 {
		goDown()
		return
	}
	d.afterLocked(delay, goDown)
}

// close stops the device and waits for its goroutines.
func (d *Device) close() {
	d.mu.Lock()
	d.closing = true
	d.cancel() // a reboot's reply grace ends: no client waits on a closed device
	for t := range d.timers {
		if t.Stop() {
			d.wg.Done() // the callback will never run
		}
		delete(d.timers, t)
	}
	d.stopLocked()
	d.unsilenceLocked()
	host, nic := d.host, d.nic
	d.mu.Unlock()
	d.wg.Wait()
	if host != nil {
		_ = host.Close()
	}
	if nic != nil {
		_ = nic.Close()
	}
}

// serve wraps every request: bookkeeping for Close, the latency fault,
// Basic auth, then the Redfish router.
func (d *Device) serve(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		if d.closing {
			d.mu.Unlock()
			writeError(w, http.StatusServiceUnavailable, "Base.1.0.ServiceShuttingDown", "service is shutting down")
			return
		}
		d.wg.Add(1)
		d.requests++
		latency := d.latency
		user, pass := d.user, d.pass
		d.mu.Unlock()
		defer d.wg.Done()
		if overlap.Mutating(r.Method) {
			defer d.overlaps.Begin(d.id, r.Header.Get(hw.HolderHeader))()
		}

		if latency > 0 {
			t := time.NewTimer(latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				// Drop the connection without an answer; returning would
				// send an empty 200.
				panic(http.ErrAbortHandler)
			}
		}
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="simulated BMC"`)
			writeError(w, http.StatusUnauthorized, "Base.1.0.InsufficientPrivilege",
				"There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.")
			return
		}
		if len(r.URL.Path) > 1 && r.URL.Path[len(r.URL.Path)-1] == '/' {
			r.URL.Path = r.URL.Path[:len(r.URL.Path)-1]
		}
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), deviceKey{}, d)))
	})
}

type deviceKey struct{}

// on registers a device handler on mux.
func on(mux *http.ServeMux, pattern string, fn func(d *Device, w http.ResponseWriter, r *http.Request)) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		d, ok := r.Context().Value(deviceKey{}).(*Device)
		if !ok {
			writeError(w, http.StatusInternalServerError, "Base.1.0.InternalError", "no device")
			return
		}
		fn(d, w, r)
	})
}

// String names the device; it never includes the password.
func (d *Device) String() string { return d.id + " (" + d.typ.Name() + " at " + d.ip + ")" }

// GoString keeps %#v from printing fields (the password among them).
func (d *Device) GoString() string { return "sim.Device{" + d.String() + "}" }

// Format makes every fmt verb print String.
func (d *Device) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(d.String())) }
