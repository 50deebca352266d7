package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/bench/replay"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// fixture is what the measured requests refer to on the daemon.
type fixture struct {
	nodes    *rmspb.NodeSet // the simulated rack's 35 nodes
	objectID string         // the simulated release, available
	jobID    string         // the parent job of the apply that brought the rack up to date
	version  string         // rmsd's GetVersion
}

// prepareTimeout bounds the preparation: the release's download and its
// apply to the simulated rack (firmware flashed and activated at the
// simulator's time scale).
const prepareTimeout = 5 * time.Minute

// prepare adds the simulated release to the daemon's catalog, waits until
// it is available, applies it to every simulated node and waits until
// that apply completed, so every node runs the release.
func prepare(ctx context.Context, d *daemon) (fixture, error) {
	ctx, cancel := context.WithTimeout(ctx, prepareTimeout)
	defer cancel()
	var f fixture
	f.nodes = &rmspb.NodeSet{}
	if err := readProtoJSON(filepath.Join(d.dir, "simulated-nodes.json"), f.nodes); err != nil {
		return f, err
	}
	var add rmspb.AddFirmwareObjectRequest
	if err := readProtoJSON(filepath.Join(d.dir, "simulated-release.json"), &add); err != nil {
		return f, err
	}
	added, err := d.rms.AddFirmwareObject(ctx, &add)
	if err != nil {
		return f, fmt.Errorf("AddFirmwareObject of the simulated release: %w", err)
	}
	f.objectID = added.GetObject().GetId()
	err = poll(ctx, "the simulated release "+f.objectID+" to be available", func() (bool, error) {
		obj, err := d.rms.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: f.objectID})
		return err == nil && obj.GetObject().GetAvailable(), nil
	})
	if err != nil {
		return f, err
	}
	resp, err := d.rms.ApplyStoredFirmwareObject(ctx, &rmspb.ApplyStoredFirmwareObjectRequest{ObjectId: f.objectID, Nodes: f.nodes})
	if err != nil {
		return f, fmt.Errorf("ApplyStoredFirmwareObject to the simulated rack: %w", err)
	}
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != len(f.nodes.GetNodes()) {
		return f, fmt.Errorf("ApplyStoredFirmwareObject to the simulated rack: %s", resp.GetResponse().GetMessage())
	}
	f.jobID = resp.GetResponse().GetJobId()
	var parent *rmspb.GetFirmwareJobStatusResponse
	err = poll(ctx, "the apply to the simulated rack to end", func() (bool, error) {
		parent, err = d.rms.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: f.jobID})
		if err != nil {
			return false, nil
		}
		st := parent.GetJobState()
		return st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED || st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED, nil
	})
	if err != nil {
		return f, err
	}
	if parent.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		return f, fmt.Errorf("the apply to the simulated rack failed: %s", parent.GetErrorMessage())
	}
	v, err := d.rms.GetVersion(ctx, &rmspb.GetVersionRequest{})
	if err != nil {
		return f, fmt.Errorf("GetVersion: %w", err)
	}
	f.version = v.GetVersion()
	return f, nil
}

// record calls every workload once on the daemon and records its reply,
// for the bare server to answer with.
func record(ctx context.Context, d *daemon, ws []workload) (*replay.Recording, error) {
	rec := &replay.Recording{}
	for _, w := range ws {
		reply, err := invoke(ctx, d.conn, w, w.request("load-recording", 0))
		if err != nil {
			return nil, err
		}
		if err := rec.Record(w.method, reply); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// readProtoJSON decodes a protobuf JSON file the daemon wrote.
func readProtoJSON(path string, into proto.Message) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := protojson.Unmarshal(b, into); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// pollStep is how often the harness checks a condition it waits for.
const pollStep = 100 * time.Millisecond

// poll calls cond every pollStep until it reports true, fails, or ctx
// ends.
func poll(ctx context.Context, what string, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(pollStep):
		}
	}
}
