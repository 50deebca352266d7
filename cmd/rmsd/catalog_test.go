package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
)

// TestRunServesTheFirmwareCatalogAndKeepsItAcrossRestarts drives the
// catalog as the daemon wires it: artifacts land in [workflows]
// firmware_dir, a shutdown cancels a download under way (and exits 0), and
// the next start keeps the objects and their defaults and settles the
// interrupted one.
func TestRunServesTheFirmwareCatalogAndKeepsItAcrossRestarts(t *testing.T) {
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	done, err := simrelease.Publish(art, simrelease.Options{Milestone: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := simrelease.Publish(art, simrelease.Options{Milestone: "1.1"})
	if err != nil {
		t.Fatal(err)
	}
	art.SetFault(held.NVOS.Path, artifactsim.Fault{Hold: true})
	firmwareDir := t.TempDir()
	environ := []string{"RMS_ALLOW_INSECURE=1", "RMS_STORAGE__SQLITE_PATH=" + filepath.Join(t.TempDir(), "rmsd.db"),
		"RMS_WORKFLOWS__FIRMWARE_DIR=" + firmwareDir}
	config := writeFile(t, insecureLoopback)

	d := startRun(t, environ, "--config", config)
	client := rmspb.NewRackManagerClient(d.conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, rel := range []simrelease.Release{done, held} {
		if _, err := client.AddFirmwareObject(ctx, &rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl",
			AccessToken: proto.String("NOAUTH"), SetDefault: rel.ID == done.ID}); err != nil {
			t.Fatal(err)
		}
	}
	waitAvailable(ctx, t, client, done.ID)
	for _, a := range done.Artifacts() {
		if _, err := os.Stat(filepath.Join(firmwareDir, "objects", done.ID, a.Name)); err != nil {
			t.Errorf("not cached in firmware_dir: %v", err)
		}
	}
	if err := art.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	stopRun(t, d) // with the NVOS image of the second object still downloading
	if !strings.Contains(d.stdout.String(), "firmware object download stopped") {
		t.Errorf("the shutdown did not stop the download:\n%s", d.stdout.String())
	}

	d = startRun(t, environ, "--config", config)
	client = rmspb.NewRackManagerClient(d.conn)
	resp, err := client.ListFirmwareObjects(ctx, &rmspb.ListFirmwareObjectsRequest{HardwareType: "gb200-nvl"})
	if err != nil {
		t.Fatal(err)
	}
	if objs := resp.GetObjects(); len(objs) != 2 || objs[0].GetId() != held.ID || objs[1].GetId() != done.ID ||
		!objs[1].GetAvailable() || !objs[1].GetIsDefault() || objs[0].GetIsDefault() {
		t.Fatalf("objects after a restart: %v", objs)
	}
	// Nothing was cached of the image: the object stays unavailable, with
	// a reason logged telling the caller to add it again.
	for !strings.Contains(d.stdout.String(), "its download was interrupted by a restart") {
		select {
		case <-ctx.Done():
			t.Fatalf("the interrupted object was not settled:\n%s", d.stdout.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if obj, err := client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: held.ID}); err != nil || obj.GetObject().GetAvailable() {
		t.Errorf("interrupted object: %v, %v", obj, err)
	}
	stopRun(t, d)
}

// waitAvailable polls GetFirmwareObject until the object is available.
func waitAvailable(ctx context.Context, t *testing.T, client rmspb.RackManagerClient, id string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetObject().GetAvailable() {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s not available: %v", id, ctx.Err())
		case <-tick.C:
		}
	}
}
