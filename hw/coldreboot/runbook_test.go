package coldreboot

import (
	"github.com/rmsd/rmsd/hw/timeline"

	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/messages"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// reporter records what a workflow reports.
type reporter struct {
	mu       sync.Mutex
	progress []string
	outcome  *messages.Outcome
	done     chan struct{}
	steps    chan string // every progress description, as it is reported
}

func newReporter() *reporter {
	return &reporter{done: make(chan struct{}), steps: make(chan string, len(stages)+1)}
}

func (r *reporter) ID() string       { return "job-1" }
func (r *reporter) ParentID() string { return "" }
func (r *reporter) Progress(d string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, d)
	r.steps <- d
	return r.outcome == nil
}
func (r *reporter) Complete(desc, result string) error {
	return r.record(messages.Completed(desc, result))
}
func (r *reporter) Fail(f messages.Failure) error { return r.record(messages.Failed(f)) }
func (r *reporter) record(o messages.Outcome) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outcome != nil {
		return messages.ErrJobTerminal
	}
	r.outcome = &o
	close(r.done)
	return nil
}

// rack is a simulated rack whose devices run 1000× faster than real ones.
type rack struct {
	fleet *sim.Fleet
	plan  Plan
	deps  Deps
}

// fastTiming polls every 20 ms and waits no floors: the simulated rack
// discharges in 120 ms and boots its BMCs in 90 ms at this time scale. The
// maxima are generous: they only bound a run that went wrong, and a loaded
// machine must not turn a slow poll into a failure.
func fastTiming() Timing {
	return Timing{
		PrestageShutdownPollMax: 30 * time.Second,
		DischargePollMax:        30 * time.Second,
		BMCUpPollMax:            30 * time.Second,
		NVOSHelloBackoff:        20 * time.Millisecond,
		NVOSHelloAttempts:       20,
		ComputeBootWait:         10 * time.Millisecond,
		PollInterval:            20 * time.Millisecond,
	}
}

func startRack(t *testing.T) *rack {
	t.Helper()
	return startRackWith(t, sim.Timing{})
}

// startRackWith starts the simulated rack with timing (zero fields take the
// simulator's defaults) at the same time scale.
func startRackWith(t *testing.T, timing sim.Timing) *rack {
	t.Helper()
	fleet, err := sim.Start(context.Background(), sim.Options{TimeScale: 0.001, Network: 109, Timing: timing})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	// Timeouts as in production: under load a TLS handshake can take
	// seconds, and no test here expects a request to time out.
	pool := redfish.NewPool(redfish.Options{})
	t.Cleanup(pool.Close)
	var nodes []hw.Node
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		n := hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}
		if sn.Host.Host() != "" {
			host := sn.Host
			n.Host = &host
		}
		nodes = append(nodes, n)
	}
	plan, _, err := Check(nodes, fastTiming())
	if err != nil {
		t.Fatal(err)
	}
	nv, err := nvue.NewPool(nvue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	runner := nodeops.New(platform.Deps{Redfish: pool, NVUE: nv, Logger: zerolog.Nop()}, 64)
	return &rack{fleet: fleet, plan: plan, deps: Deps{Nodes: runner}}
}

// run executes the runbook and returns what it reported.
func (r *rack) run(t *testing.T, ctx context.Context) *reporter {
	t.Helper()
	rep := newReporter()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		r.plan.Workflow(r.deps).Run(ctx, rep)
	}()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("runbook did not end within 60s")
	}
	select {
	case <-rep.done:
	default:
		t.Fatal("the runbook ended without a terminal state")
	}
	return rep
}

type resultDoc struct {
	Status       string `json:"status"`
	RackID       string `json:"rack_id"`
	Restore      string `json:"restore"`
	CurrentStage string `json:"current_stage"`
	Stages       []struct {
		Name, Status, Message string
	} `json:"stages"`
}

func decode(t *testing.T, s string) resultDoc {
	t.Helper()
	var d resultDoc
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("result_json %q: %v", s, err)
	}
	return d
}

func TestRunbookCyclesTheRackAndRecordsEveryStage(t *testing.T) {
	r := startRack(t)
	rep := r.run(t, context.Background())
	if rep.outcome.State != messages.StateCompleted || rep.outcome.Description != "Cold reboot completed" {
		t.Fatalf("outcome = %+v", rep.outcome)
	}
	doc := decode(t, rep.outcome.ResultJSON)
	if doc.Status != "completed" || doc.RackID != r.plan.RackID || len(doc.Stages) != len(stages) {
		t.Fatalf("result = %+v", doc)
	}
	for _, s := range doc.Stages {
		if s.Status != timeline.Completed {
			t.Errorf("stage %s is %s", s.Name, s.Status)
		}
	}
	if !strings.HasPrefix(rep.progress[0], "Rack reboot step 0: ") || !strings.Contains(strings.Join(rep.progress, "|"), "Rack reboot step 2-3: ") {
		t.Errorf("progress = %q", rep.progress)
	}
	for _, n := range r.plan.Compute {
		d, _ := r.fleet.Device(n.ID)
		resets := d.Resets()
		// The rack went dark in between: the BMC forgot nothing it needs,
		// but the last request it served must be the final power-on.
		if len(resets) == 0 || resets[len(resets)-1] != "On" {
			t.Errorf("%s resets = %v, want the runbook's final On", n.ID, resets)
		}
		if d.Boots() == 0 {
			t.Errorf("%s never cold-booted", n.ID)
		}
	}
}

func TestRunbookFailsFastWhenAShelfNeverComesBack(t *testing.T) {
	r := startRack(t)
	bad := r.plan.Shelves[2]
	d, _ := r.fleet.Device(bad.ID)
	if err := d.FailPowerOn(true); err != nil {
		t.Fatal(err)
	}
	timing := fastTiming()
	timing.BMCUpPollMax = 500 * time.Millisecond
	r.plan.Timing = timing
	rep := r.run(t, context.Background())
	o := rep.outcome
	if o.State != messages.StateFailed || o.Code != messages.ErrorTimeout ||
		!strings.Contains(o.Message, "verify_bmc_up") || !strings.Contains(o.Message, bad.ID) {
		t.Fatalf("outcome = %+v", o)
	}
	doc := decode(t, o.ResultJSON)
	if doc.Status != "failed" || doc.CurrentStage != "verify_bmc_up" {
		t.Fatalf("result = %+v", doc)
	}
	for _, s := range doc.Stages {
		if (s.Name == "verify_nvos_ready" || s.Name == "power_on_compute" || s.Name == "wait_compute_boot") && s.Status != timeline.Skipped {
			t.Fatalf("a stage after the failure is not marked skipped: %+v", s)
		}
	}
	for _, n := range r.plan.Compute {
		dev, _ := r.fleet.Device(n.ID)
		if resets := dev.Resets(); len(resets) > 0 && resets[len(resets)-1] == "On" {
			t.Fatalf("%s was powered on after the failed stage", n.ID)
		}
	}
}

func TestRunbookReportsCancellation(t *testing.T) {
	r := startRack(t)
	timing := fastTiming()
	timing.DischargeFloor = time.Hour // the run parks in stage 2-3
	r.plan.Timing = timing
	ctx, cancel := context.WithCancel(context.Background())
	rep := newReporter()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		r.plan.Workflow(r.deps).Run(ctx, rep)
	}()
	// Cancel once the run has reached the discharge wait.
	deadline := time.After(30 * time.Second)
	for reached := false; !reached; {
		select {
		case step := <-rep.steps:
			reached = strings.HasPrefix(step, "Rack reboot step 2-3")
		case <-deadline:
			t.Fatal("runbook never reached the discharge wait")
		}
	}
	cancel()
	<-exited
	// Past shelves-off a cancel does not leave the rack dark: the shelves
	// are powered back on first, and the record says so.
	o := rep.outcome
	if o.State != messages.StateFailed || o.Message != `cold reboot cancelled at stage "verify_discharged": shelves restored` ||
		decode(t, o.ResultJSON).Status != "cancelled" || decode(t, o.ResultJSON).Restore != "shelves restored" {
		t.Fatalf("outcome = %+v", o)
	}
	if !r.fleet.Racks()[0].Fed() {
		t.Fatal("the shelves are still off after the cancelled run")
	}
}

func TestCheckAdmission(t *testing.T) {
	ep := &hw.Endpoint{IP: "127.0.0.1", Credentials: hw.UserPass("u", "p")}
	node := func(rack, id string, t hw.NodeType, host bool) hw.Node {
		n := hw.Node{ID: id, RackID: rack, Type: t, BMC: ep}
		if host {
			n.Host = ep
		}
		return n
	}
	good := []hw.Node{
		node("r1", "c1", hw.ComputeGB200Nvidia, false),
		node("r1", "s1", hw.SwitchGB200Nvidia, true),
		node("r1", "p1", hw.PowerShelfGB200Liteon, false),
	}
	if p, errs, err := Check(good, DefaultTiming()); err != nil || len(p.Compute)+len(p.Switches)+len(p.Shelves) != 3 || errs[0] != nil {
		t.Fatalf("good rack refused: %v %v", err, errs)
	}
	tests := []struct {
		name     string
		give     []hw.Node
		wantNode int
		want     string
		wantErr  error
	}{
		{"no shelf", good[:2], -1, "0 power shelves", ErrNotARack},
		{"two racks", append(append([]hw.Node(nil), good...), node("r2", "c9", hw.ComputeGB200Nvidia, false)), 3, "one rack per request", ErrNodesRefused},
		{"switch without host", []hw.Node{good[0], node("r1", "s1", hw.SwitchGB200Nvidia, false), good[2]}, 1, "host_endpoint", ErrNodesRefused},
		{"duplicate", append(append([]hw.Node(nil), good...), good[0]), 3, "duplicate target rack_id/node_id: r1/c1", ErrNodesRefused},
		{"empty node id", append(append([]hw.Node(nil), good...), node("r1", "", hw.ComputeGB200Nvidia, false)), 3, "node_id is empty", ErrNodesRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, err := Check(tt.give, DefaultTiming())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			got := err.Error()
			if tt.wantNode >= 0 {
				got = errs[tt.wantNode].Error()
				if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "not one rack") {
					t.Fatalf("request error %q does not name the node's cause %q", err, tt.want)
				}
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunbookFailsWhenNVOSNeverAnswers(t *testing.T) {
	r := startRack(t)
	sw := &r.plan.Switches[1]
	wrong := *sw.Host
	wrong.Credentials = hw.UserPass(wrong.Credentials.Username, "not-the-nvos-password")
	sw.Host = &wrong
	timing := fastTiming()
	timing.NVOSHelloAttempts = 3
	r.plan.Timing = timing
	rep := r.run(t, context.Background())
	o := rep.outcome
	if o.State != messages.StateFailed || o.Code != messages.ErrorUnauthenticated ||
		!strings.Contains(o.Message, "NVOS not ready on "+sw.ID+" after 3 attempts") {
		t.Fatalf("outcome = %+v", o)
	}
	if strings.Contains(o.Message, "not-the-nvos-password") || strings.Contains(o.ResultJSON, "not-the-nvos-password") {
		t.Fatal("a password leaked into the job record")
	}
	if doc := decode(t, o.ResultJSON); doc.CurrentStage != "verify_nvos_ready" {
		t.Fatalf("failed at %s, want verify_nvos_ready", doc.CurrentStage)
	}
}

func TestOnlyABMCThatNothingAnswersCountsAsDischarged(t *testing.T) {
	pool := redfish.NewPool(redfish.Options{RequestTimeout: 2 * time.Second, ConnectTimeout: time.Second, ProbeTimeout: 2 * time.Second})
	defer pool.Close()
	probe := func(ep hw.Endpoint) error {
		c, err := pool.Client(ep)
		if err != nil {
			t.Fatal(err)
		}
		return c.Alive(context.Background())
	}
	creds := hw.UserPass("admin", "secret")

	// A listener that takes the connection and never says a word, like
	// an address with no powered BMC behind it: gone.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	defer func() {
		silent.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	if err := probe(hw.Endpoint{IP: "127.0.0.1", Port: silent.Addr().(*net.TCPAddr).Port, Credentials: creds}); !gone(err) {
		t.Fatalf("silent listener: %v does not count as gone", err)
	}

	// Nothing listens, so the connection is refused: a reset is an
	// answer from a powered network stack, not discharge.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().(*net.TCPAddr)
	closed.Close()
	if err := probe(hw.Endpoint{IP: "127.0.0.1", Port: addr.Port, Credentials: creds}); err == nil || gone(err) {
		t.Fatalf("refused connection: %v counts as gone", err)
	}

	// A name that does not resolve is a resolver failure, not discharge.
	if err := probe(hw.Endpoint{IP: "bmc.rack-001.invalid", Port: 443, Credentials: creds}); err == nil || gone(err) {
		t.Fatalf("DNS failure: %v counts as gone", err)
	}

	// A BMC that refuses the credentials is there.
	unauthorized := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer unauthorized.Close()
	if err := probe(endpointOf(t, unauthorized.URL, creds)); err == nil || gone(err) {
		t.Fatalf("401: %v counts as gone", err)
	}

	// A listener whose TLS handshake fails is there.
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	if err := probe(endpointOf(t, plain.URL, creds)); err == nil || gone(err) {
		t.Fatalf("TLS failure: %v counts as gone", err)
	}

	// A BMC that completes the handshake and then never replies is
	// powered: slow, not gone.
	stuck := make(chan struct{})
	hung := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stuck }))
	defer hung.Close()
	defer close(stuck)
	if err := probe(endpointOf(t, hung.URL, creds)); err == nil || gone(err) {
		t.Fatalf("hung reply after the handshake: %v counts as gone", err)
	}
}

func endpointOf(t *testing.T, raw string, creds hw.Credentials) hw.Endpoint {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return hw.Endpoint{IP: host, Port: p, Credentials: creds}
}

// runUntilShutdown runs the runbook with an engine-shaped context and
// begins a shutdown (a soft cancel) when the run reports a step starting
// with atStep.
func (r *rack) runUntilShutdown(t *testing.T, atStep string) *reporter {
	t.Helper()
	hard, hardStop := context.WithCancelCause(context.Background())
	defer hardStop(nil)
	soft, softStop := context.WithCancelCause(hard)
	rep := newReporter()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		r.plan.Workflow(r.deps).Run(messages.WorkflowContext(soft, hard), rep)
	}()
	deadline := time.After(30 * time.Second)
	for reached := false; !reached; {
		select {
		case step := <-rep.steps:
			reached = strings.HasPrefix(step, atStep)
		case <-exited:
			t.Fatalf("runbook ended before %q: %+v", atStep, rep.outcome)
		case <-deadline:
			rep.mu.Lock()
			t.Fatalf("runbook never reached %q; it reported %q", atStep, rep.progress)
		}
	}
	softStop(messages.ErrShuttingDown)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("runbook did not end within 60s")
	}
	return rep
}

func TestShutdownBeforeTheShelvesGoOffCancelsTheRun(t *testing.T) {
	r := startRack(t)
	timing := fastTiming()
	timing.PrestageShutdownFloor = time.Hour // parks before the shelves go off
	r.plan.Timing = timing
	o := r.runUntilShutdown(t, "Rack reboot step 0").outcome
	if o.State != messages.StateFailed || !strings.HasPrefix(o.Message, "cold reboot cancelled during prestage_") ||
		!strings.HasSuffix(o.Message, ": rmsd is shutting down") {
		t.Fatalf("outcome = %+v", o)
	}
	for _, n := range r.plan.Shelves {
		if d, _ := r.fleet.Device(n.ID); len(d.Resets()) != 0 {
			t.Fatalf("shelf %s was switched after the shutdown began: %v", n.ID, d.Resets())
		}
	}
}

func TestShutdownAfterTheShelvesGoOffLetsTheRunFinish(t *testing.T) {
	r := startRack(t)
	r.deps.DrainWindow = time.Hour // far more than the run needs
	o := r.runUntilShutdown(t, "Rack reboot step 2-3").outcome
	if o.State != messages.StateCompleted || o.Description != "Cold reboot completed" {
		t.Fatalf("a shutdown stranded the rack half-way: %+v", o)
	}
}
