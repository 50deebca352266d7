package rmsserver

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/hw/switchadmin"
)

// adminRack is rmsd wired as `rmsd --simulate` for the switch
// administration RPCs, with every log captured: the server's, the job
// engine's (and its actor system's) and the simulator's, so a test can
// search all of them for a secret.
type adminRack struct {
	*simRack
	logs *syncBuffer
}

// fastAdminTiming polls every few milliseconds; a switch reboot lasts a
// second of wall-clock time (see startAdminRack).
var fastAdminTiming = switchadmin.Timing{
	ResetPoll: 5 * time.Millisecond, ResetTimeout: 20 * time.Second,
	LoginRetry: 5 * time.Millisecond, LoginTimeout: 10 * time.Second,
	SDNActionTimeout: 10 * time.Second, SDNPoll: 2 * time.Millisecond, SDNTimeout: 10 * time.Second,
}

func startAdminRack(t *testing.T, timing switchadmin.Timing) *adminRack {
	t.Helper()
	return startAdminRackWith(t, timing, nil)
}

// startAdminRackWith is startAdminRack whose server dependencies more
// completes.
func startAdminRackWith(t *testing.T, timing switchadmin.Timing, more func(*Deps)) *adminRack {
	t.Helper()
	return startAdminRackConf(t, timing, adminRackConf{deps: func(_ adminWiring, d *Deps) {
		if more != nil {
			more(d)
		}
	}})
}

// adminWiring is what an admin rack's server dependencies are built
// from: the fleet, rmsd's NVUE pool and SSH policy.
type adminWiring struct {
	fleet *sim.Fleet
	nvue  *nvue.Pool
	ssh   sshsftp.Options
}

// adminRackConf changes an admin rack before it starts: the fleet's
// options, rmsd's NVUE options and the server dependencies (nil: none).
type adminRackConf struct {
	fleet func(*sim.Options)
	nvue  func(*nvue.Options)
	deps  func(adminWiring, *Deps)
}

// startAdminRackConf is startAdminRack changed by conf.
func startAdminRackConf(t *testing.T, timing switchadmin.Timing, conf adminRackConf) *adminRack {
	t.Helper()
	logs := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	// A factory reset's reboot lasts a second of wall-clock time: the job
	// must see the switch go down, which a reboot of a few milliseconds
	// would let pass unseen on a loaded machine.
	const outage = 1000 * time.Second // × 0.001
	fleetOpts := sim.Options{TimeScale: 0.001, Logger: zerolog.New(logs), Timing: sim.Timing{NVOSReboot: outage}}
	if conf.fleet != nil {
		conf.fleet(&fleetOpts)
	}
	fleet, err := sim.Start(context.Background(), fleetOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	s := &simRack{fleet: fleet}
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		n := hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}
		if sn.Host.Host() != "" {
			host := sn.Host
			n.Host = &host
		}
		s.nodes = append(s.nodes, n)
	}
	pool := redfish.NewPool(redfish.Options{RequestTimeout: 10 * time.Second})
	t.Cleanup(pool.Close)
	nvOpts := nvue.Options{Port: fleet.NVUEPort(), PollInterval: 2 * time.Millisecond, WaitTimeout: 10 * time.Second,
		Logger: zerolog.New(logs).Level(zerolog.DebugLevel)}
	if conf.nvue != nil {
		conf.nvue(&nvOpts)
	}
	nv, err := nvue.NewPool(nvOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	ssh := sshsftp.Options{Port: fleet.SSHPort(), HostKey: sshsftp.AcceptAnyHostKey(), ConnectTimeout: 5 * time.Second,
		Logger: zerolog.New(logs).Level(zerolog.DebugLevel)}
	s.runner = nodeops.New(platform.Deps{Redfish: pool, NVUE: nv, Logger: zerolog.New(logs).Level(zerolog.DebugLevel), SSH: ssh}, 64)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	s.engine, err = actors.New(sys, actors.Options{Logger: zerolog.New(logs).Level(zerolog.DebugLevel)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.engine.Close()
		sys.Shutdown()
	})
	deps := Deps{Nodes: s.runner, Jobs: s.engine, SwitchAdminTiming: timing}
	if conf.deps != nil {
		conf.deps(adminWiring{fleet: fleet, nvue: nv, ssh: ssh}, &deps)
	}
	ts := startServer(t, Options{Logger: zerolog.New(logs).Level(zerolog.DebugLevel), Deps: deps})
	s.conn = dial(t, ts.addr, nil)
	s.client = rmspb.NewRackManagerClient(s.conn)
	return &adminRack{simRack: s, logs: logs}
}

// nvos returns the simulated NVOS host of a switch node.
func (a *adminRack) nvos(t *testing.T, n hw.Node) *sim.NVOSHost {
	t.Helper()
	for _, sn := range a.fleet.Nodes() {
		if sn.ID == n.ID {
			if h, ok := sn.Switch.(*sim.NVOSHost); ok {
				return h
			}
		}
	}
	t.Fatalf("%s has no simulated NVOS host", n.ID)
	return nil
}

// withLogin is n as a caller who believes its host login is user/password.
func withLogin(n hw.Node, user, password string) hw.Node {
	h := *n.Host
	h.Credentials = hw.UserPass(user, password)
	n.Host = &h
	return n
}

// waitJobs polls GetJobStatus (with children) until the parent is
// terminal and returns every state, the parent first.
func (a *adminRack) waitJobs(t *testing.T, parent string) []*rmspb.JobStatus {
	t.Helper()
	var states []*rmspb.JobStatus
	eventuallyRPC(t, "job "+parent+" terminal", func() bool {
		resp, err := a.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: parent, IncludeChildJobStates: true})
		if err != nil {
			t.Fatalf("GetJobStatus: %v", err)
		}
		states = resp.GetJobStates()
		st := states[0].GetExecutionState()
		return st == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || st == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
	})
	return states
}

// childOf returns the job of node among states.
func childOf(t *testing.T, states []*rmspb.JobStatus, node string) *rmspb.JobStatus {
	t.Helper()
	for _, s := range states[1:] {
		if s.GetNodeId() == node {
			return s
		}
	}
	t.Fatalf("no job for %s among %v", node, states)
	return nil
}

// loginWorks reports whether NVUE on n's switch accepts user/password.
func (a *adminRack) loginWorks(t *testing.T, n hw.Node, user, password string) bool {
	t.Helper()
	c, err := nvue.New(*withLogin(n, user, password).Host, nvue.Options{Port: a.fleet.NVUEPort()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.System(rpcContext(t))
	return err == nil
}

// assertNeverShown fails when secret appears in any captured log line or
// in any of the job records.
func (a *adminRack) assertNeverShown(t *testing.T, secret string, jobs ...*rmspb.JobStatus) {
	t.Helper()
	logs := a.logs.String()
	for _, proof := range []string{`"batch admitted"`, `"nvue request"`} {
		if !strings.Contains(logs, proof) {
			t.Fatalf("the logs were not captured: no %s line", proof)
		}
	}
	if strings.Contains(logs, secret) {
		t.Errorf("the password appears in the logs")
	}
	for _, j := range jobs {
		if strings.Contains(protojson.Format(j), secret) {
			t.Errorf("the password appears in job %s: %s", j.GetJobId(), protojson.Format(j))
		}
	}
}
