package fwupdate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/messages"
)

// testNetwork is this package's share of 127/8 for simulated racks.
const testNetwork = 115

// testPassword is what every simulated BMC accepts; no report may show it.
const testPassword = "fwupdate-Secret-pw-7731"

// reporter is a job as a workflow sees it, recording what it is told.
type reporter struct {
	mu       sync.Mutex
	progress []string
	outcome  *messages.Outcome
	done     chan struct{}
	// steps receives every progress description as it is reported.
	steps chan string
}

func newReporter() *reporter {
	return &reporter{done: make(chan struct{}), steps: make(chan string, 64)}
}

func (r *reporter) ID() string       { return "job-fw-1" }
func (r *reporter) ParentID() string { return "" }

func (r *reporter) Progress(d string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, d)
	select {
	case r.steps <- d:
	default: // nobody is watching this many steps
	}
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

// said returns everything the job reported, as one string.
func (r *reporter) said() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := strings.Join(r.progress, "\n")
	if o := r.outcome; o != nil {
		all += "\n" + o.Description + "\n" + o.Message + "\n" + o.ResultJSON
	}
	return all
}

// bench is one simulated node and what a workflow needs to drive it.
type bench struct {
	node   hw.Node
	device *sim.Device
	deps   Deps
	dir    string
}

// fastSim runs the simulated devices 1000× faster than real ones, with
// short flashes and reboots: a task takes 50 ms, a BMC reboot 60 ms.
func fastSim(l sim.Layout) sim.Options {
	return sim.Options{Layout: l, TimeScale: 0.001, NoSwitchHosts: true, Network: testNetwork,
		Credentials: hw.UserPass("admin", testPassword),
		Timing: sim.Timing{ComputeFlash: 50 * time.Second, ShelfFlash: 50 * time.Second, BMCReboot: 60 * time.Second,
			ShelfReboot: 60 * time.Second, PowerTransition: 20 * time.Second, ResetDelay: 5 * time.Second}}
}

// fastTiming polls every 5 ms and checks versions right away. Bounds stay
// generous: they only end a run that went wrong.
func fastTiming() Timing {
	return Timing{PollInterval: 5 * time.Millisecond, TaskReadGrace: 10 * time.Second,
		VersionCheckDelay: time.Millisecond, VersionCheckInterval: 5 * time.Millisecond, VersionCheckAttempts: 5}
}

// startBench starts a fresh one-node rack of layout l.
func startBench(t *testing.T, l sim.Layout) *bench {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fleet, err := sim.Start(ctx, fastSim(l))
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(fleet.Close)
	pool := redfish.NewPool(redfish.Options{RequestTimeout: 10 * time.Second, LivenessInterval: 5 * time.Millisecond,
		LivenessTimeout: 20 * time.Second, ProbeTimeout: time.Second})
	t.Cleanup(pool.Close)
	sn := fleet.Nodes()[0]
	bmc := sn.BMC
	return &bench{
		node:   hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc},
		device: sn.Device,
		deps:   Deps{Nodes: nodeops.New(platform.Deps{Redfish: pool, Logger: zerolog.Nop()}, 4), Timing: fastTiming()},
		dir:    t.TempDir(),
	}
}

func computeBench(t *testing.T) *bench {
	return startBench(t, sim.Layout{Compute: 1})
}

// pkg writes a package the simulated device reports as version once
// flashed and returns its path.
func (b *bench) pkg(t *testing.T, name, version string) string {
	t.Helper()
	path := filepath.Join(b.dir, name)
	if err := os.WriteFile(path, sim.FirmwarePackage(version, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// installed is the version the device runs for component id.
func (b *bench) installed(t *testing.T, id string) string {
	t.Helper()
	v, _, err := b.device.Firmware(id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// run executes p to its end and returns what it reported.
func (b *bench) run(t *testing.T, ctx context.Context, p Plan) *reporter {
	t.Helper()
	rep := newReporter()
	b.runWith(t, ctx, p, rep)
	return rep
}

// runWith executes p reporting to rep and checks that it ended with one
// terminal state and never showed the BMC password.
func (b *bench) runWith(t *testing.T, ctx context.Context, p Plan, rep *reporter) {
	t.Helper()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		p.Workflow(b.deps).Run(ctx, rep)
	}()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("workflow did not end within 60s")
	}
	select {
	case <-rep.done:
	default:
		t.Fatal("workflow ended without a terminal state")
	}
	if strings.Contains(rep.said(), testPassword) {
		t.Fatalf("the job showed the BMC password: %s", rep.said())
	}
}

// successResult is a decoded success document.
type successResult struct {
	RackID           string `json:"rack_id"`
	NodeID           string `json:"node_id"`
	TargetsCompleted int    `json:"targets_completed"`
	TargetsSkipped   int    `json:"targets_skipped"`
	Targets          []struct {
		Component    string `json:"component"`
		Target       string `json:"target"`
		FirmwareFile string `json:"firmware_file"`
		Status       string `json:"status"`
		TaskID       string `json:"task_id"`
		Version      string `json:"version"`
	} `json:"targets"`
	Activated       bool   `json:"activated"`
	ActivationCount *int   `json:"activation_count"`
	Check           string `json:"post_activation_version_check"`
	Status          string `json:"status"`
}

// failureResult is a decoded failure document.
type failureResult struct {
	Status       string `json:"status"`
	Phase        string `json:"phase"`
	ErrorCode    string `json:"error_code"`
	ErrorMessage string `json:"error_message"`
	Summary      string `json:"summary"`
	Target       *struct {
		Component       string `json:"component"`
		FirmwareFile    string `json:"firmware_file"`
		ExpectedVersion string `json:"expected_version"`
	} `json:"target"`
}

// completed requires a Completed outcome and decodes its result.
func completed(t *testing.T, rep *reporter) successResult {
	t.Helper()
	o := rep.outcome
	if o.State != messages.StateCompleted {
		t.Fatalf("outcome = %+v, want Completed", o)
	}
	var doc successResult
	if err := json.Unmarshal([]byte(o.ResultJSON), &doc); err != nil {
		t.Fatalf("result_json %q: %v", o.ResultJSON, err)
	}
	return doc
}

// failed requires a Failed outcome with code and decodes its result.
func failed(t *testing.T, rep *reporter, code messages.JobError) failureResult {
	t.Helper()
	o := rep.outcome
	if o.State != messages.StateFailed || o.Code != code {
		t.Fatalf("outcome = %+v, want Failed with %s", o, code)
	}
	var doc failureResult
	if err := json.Unmarshal([]byte(o.ResultJSON), &doc); err != nil {
		t.Fatalf("result_json %q: %v", o.ResultJSON, err)
	}
	if doc.Status != "failed" || doc.ErrorCode != code.String() || doc.ErrorMessage != o.Message ||
		!strings.Contains(doc.Summary, clip(o.Message, 200)) || len(doc.Summary) > maxSummary {
		t.Fatalf("failure document %+v does not match the outcome %+v", doc, o)
	}
	return doc
}

// count returns how often want occurs in list.
func count(list []string, want string) int {
	n := 0
	for _, s := range list {
		if s == want {
			n++
		}
	}
	return n
}
