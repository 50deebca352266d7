package rmsserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// fuzzObjects are firmware objects the fuzz fixture's catalog holds, and
// history records name, so that the catalog seeds find some. Only ready is
// available (ApplyStoredFirmwareObject can start jobs with it); the
// downloads of the others failed.
var fuzzObjects = struct{ plain, dflt, gone, ready string }{"DGXGB200_fuzz-1", "DGXGB300_fuzz-2", "DGXGB200_fuzz-deleted", "DGXGB200_fuzz-ready"}

// offlineDownloader is the fuzz fixture's downloader: it checks artifacts
// as the real one does (file sources are refused: it has no firmware
// directory) and fails every transfer at once, so fuzzing never reaches
// the network, whatever URL a fuzzed manifest names. The artifacts of
// fuzzObjects.ready are "fetched" without a transfer: a small package is
// written in their place.
type offlineDownloader struct{ check *download.Downloader }

func (d offlineDownloader) Check(arts []manifest.Artifact) error { return d.check.Check(arts) }

func (offlineDownloader) Fetch(_ context.Context, dir string, a manifest.Artifact, _ hw.Secret) (download.Result, error) {
	if filepath.Base(dir) == fuzzObjects.ready {
		path := filepath.Join(dir, a.Name)
		data := sim.FirmwarePackage("fuzz-1.0", 256)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return download.Result{Name: a.Name, Err: err}, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return download.Result{Name: a.Name, Err: err}, err
		}
		return download.Result{Name: a.Name, Path: path, Size: int64(len(data))}, nil
	}
	err := &download.ArtifactError{Name: a.Name, Source: a.Source.String(),
		Err: fmt.Errorf("%w: fuzzing fetches nothing", download.ErrTransport)}
	return download.Result{Name: a.Name, Err: err}, err
}

// fuzzCatalog opens the fuzz fixture's catalog on an in-memory store, with
// its objects and history, closed when the fuzzing (or test) ends.
func fuzzCatalog(f testing.TB) *catalog.Service {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, sqlstore.MemoryPath, sqlstore.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	check := download.New(download.Options{})
	f.Cleanup(check.Close)
	svc, err := catalog.Open(ctx, catalog.Options{Store: st, Downloader: offlineDownloader{check}, Dir: f.TempDir(), Logger: zerolog.Nop()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(svc.Close) // before the store closes
	// The server only makes the manifests' URLs; nothing is fetched.
	srv, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	for _, o := range []struct {
		product, milestone, hwType string
		dflt                       bool
	}{{"DGXGB200", "fuzz-1", "gb200-nvl", false}, {"DGXGB300", "fuzz-2", "any", true}, {"DGXGB200", "fuzz-ready", "gb200-nvl", false}} {
		rel, err := simrelease.Publish(srv, simrelease.Options{Product: o.product, Milestone: o.milestone, Size: 1024})
		if err != nil {
			f.Fatal(err)
		}
		if _, err := svc.Add(ctx, catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: o.hwType, SetDefault: o.dflt}); err != nil {
			f.Fatal(err)
		}
	}
	for _, id := range []string{fuzzObjects.plain, fuzzObjects.gone, fuzzObjects.dflt} {
		if _, err := st.RecordApply(ctx, store.ApplyRecord{ObjectID: id, RackID: "rack-001", NodeIDs: []string{"rack-001-switch-01"},
			FirmwareType: "prod", HardwareType: "gb200-nvl", JobID: "fuzz-job", Operation: "ApplyStoredFirmwareObject"}); err != nil {
			f.Fatal(err)
		}
	}
	// The ready object's "download" writes local files only; its
	// availability is recorded once every artifact is written.
	deadline := time.Now().Add(30 * time.Second)
	for {
		obj, err := svc.Get(ctx, fuzzObjects.ready)
		if err != nil {
			f.Fatal(err)
		}
		if obj.Available {
			break
		}
		if obj.UnavailableReason != "" || time.Now().After(deadline) {
			f.Fatalf("firmware object %s not available: %s", fuzzObjects.ready, obj.UnavailableReason)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return svc
}
