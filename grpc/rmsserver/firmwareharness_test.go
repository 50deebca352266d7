package rmsserver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/fwupdate"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// firmwareRack is rmsd as `rmsd --simulate` wires it for the firmware
// RPCs: a simulated rack (time scaled down 1000×), its nodes registered, a
// real job engine, a firmware catalog on a SQLite file with its firmware
// directory, and a simulated artifact server publishing a GB200 release.
type firmwareRack struct {
	*simRack
	dir     string // firmware_dir
	art     *artifactsim.Server
	catalog *catalog.Service
	release simrelease.Release
	logs    *syncBuffer
}

// fastFirmwareTiming polls devices every few milliseconds: the simulated
// rack's flashes and reboots take milliseconds too.
var fastFirmwareTiming = fwupdate.Timing{
	PollInterval: 5 * time.Millisecond, VersionCheckDelay: time.Millisecond,
	VersionCheckInterval: 20 * time.Millisecond, VersionCheckAttempts: 1500, // 30 s: bounds, never paces
}

func startFirmwareRack(t *testing.T, profiles map[string][]string) *firmwareRack {
	t.Helper()
	return startFirmwareRackWith(t, profiles, artifactsim.Options{}, "")
}

// startFirmwareRackWith is startFirmwareRack with an artifact server of
// its own options, publishing the release's packages at locations of
// locationType ("" is HTTPS).
func startFirmwareRackWith(t *testing.T, profiles map[string][]string, artOpts artifactsim.Options, locationType string) *firmwareRack {
	t.Helper()
	// Every reboot an activation waits for (a BMC's, a shelf controller's,
	// a switch's own) lasts a second of wall-clock time: the update must see
	// the device go down, which an outage of a few milliseconds would let
	// pass unseen on a loaded machine.
	const outage = 1000 * time.Second // × 0.001
	simLogs := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("simulator log:\n%s", simLogs.String())
		}
	})
	s := startSimRackWith(t, sim.Options{TimeScale: 0.001, Logger: zerolog.New(simLogs),
		Timing: sim.Timing{BMCReboot: outage, ShelfReboot: outage, NVOSReboot: outage}})
	art, err := artifactsim.Start(artOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	f := &firmwareRack{simRack: s, dir: t.TempDir(), art: art, logs: &syncBuffer{}}
	s.runner = fastRunner(t, s.fleet)
	f.release, err = simrelease.Publish(art, simrelease.Options{Size: 4 << 10, LocationType: locationType})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), catalogWait)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(f.logs).Level(zerolog.DebugLevel)
	// The simulated artifact server is plain http: allow the token there.
	dl := download.New(download.Options{SourceRoot: f.dir, AllowInsecureToken: true, Logger: log})
	f.catalog, err = catalog.Open(ctx, catalog.Options{Store: st, Downloader: dl, Dir: f.dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.catalog.Close()
		dl.Close()
		_ = st.Close()
	})
	ts := startServer(t, Options{Logger: log, Deps: Deps{
		Racks: s.racks, Nodes: s.runner, Jobs: s.engine, Catalog: f.catalog,
		FirmwareDir: f.dir, FirmwareTiming: fastFirmwareTiming, InventoryProfiles: profiles,
		SwitchImageTiming: fastSwitchImageTiming,
	}})
	s.client = rmspb.NewRackManagerClient(dial(t, ts.addr, nil))
	return f
}

// addRelease adds the published release to the catalog and waits until
// it is available.
func (f *firmwareRack) addRelease(t *testing.T) {
	t.Helper()
	if _, err := f.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{
		ConfigJson: f.release.ConfigJSON, HardwareType: "gb200-nvl", SetDefault: true}); err != nil {
		t.Fatalf("AddFirmwareObject: %v", err)
	}
	eventuallyRPC(t, "release available", func() bool {
		resp, err := f.client.GetFirmwareObject(rpcContext(t), &rmspb.GetFirmwareObjectRequest{Id: f.release.ID})
		return err == nil && resp.GetObject().GetAvailable()
	})
}

// waitFirmwareJob polls GetFirmwareJobStatus until the job is terminal.
func (f *firmwareRack) waitFirmwareJob(t *testing.T, id string) *rmspb.GetFirmwareJobStatusResponse {
	t.Helper()
	var last *rmspb.GetFirmwareJobStatusResponse
	eventuallyRPC(t, "job "+id+" terminal", func() bool {
		resp, err := f.client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: id})
		if err != nil {
			t.Fatalf("GetFirmwareJobStatus: %v", err)
		}
		last = resp
		st := resp.GetJobState()
		return st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED || st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED
	})
	return last
}

// holdNode keeps a node busy with a job that runs until the test ends.
func (f *firmwareRack) holdNode(t *testing.T, n hw.Node) string {
	t.Helper()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	job, err := f.engine.Create(rpcContext(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: n.RackID, NodeID: n.ID},
		messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			_ = job.Complete("Completed", "")
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	return job.ID
}

// fastRunner drives the simulated rack with every device wait (power
// state, BMC and switch reboots) polled every few milliseconds, each probe
// keeping the default 5 s timeout (a probe that times out counts as the
// device being down, and a loaded machine must not fake a reboot), and reaches
// the simulated NVOS hosts over NVUE and SSH as `rmsd --simulate` does.
func fastRunner(t *testing.T, fleet *sim.Fleet) *nodeops.Runner {
	t.Helper()
	pool := redfish.NewPool(redfish.Options{RequestTimeout: 10 * time.Second, TaskPollInterval: 5 * time.Millisecond,
		LivenessInterval: 5 * time.Millisecond, LivenessTimeout: time.Minute})
	t.Cleanup(pool.Close)
	nv, err := nvue.NewPool(nvue.Options{Port: fleet.NVUEPort()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	return nodeops.New(platform.Deps{
		Redfish: pool, NVUE: nv, Logger: zerolog.Nop(),
		SSH:          sshsftp.Options{Port: fleet.SSHPort(), HostKey: sshsftp.AcceptAnyHostKey()},
		SwitchReboot: platform.SwitchRebootTiming{ProbeInterval: 5 * time.Millisecond, InstallTimeout: time.Minute, PowerCycleTimeout: time.Minute},
		ONIE:         hw.Credentials{Username: "root"}, // the simulator's ONIE login, as ONIE ships
	}, 64)
}

// firmwareWait bounds the waits of the firmware tests: a whole rack's
// update takes seconds, but a loaded machine may stretch it many times.
const firmwareWait = 2 * time.Minute

// eventuallyRPC polls cond until it holds, failing after firmwareWait.
func eventuallyRPC(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(firmwareWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
