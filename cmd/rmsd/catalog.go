package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/store"
)

// catalogOpenTimeout bounds reading the catalog at start (re-verifying
// interrupted downloads runs in the background, unbounded).
const catalogOpenTimeout = time.Minute

// firmwareCatalog is the firmware object catalog and the downloader it
// fetches artifacts with.
type firmwareCatalog struct {
	svc *catalog.Service
	dl  *download.Downloader
}

// openCatalog starts the firmware catalog on the store: artifacts are
// cached below [workflows] firmware_dir, each at most max_artifact_bytes;
// file sources must lie inside firmware_dir. config.DownloadSlots
// transfers run at once, at most max_downloads_per_host from one host, and
// each must keep min_download_bytes_per_second over
// download_rate_window_seconds (0 turns that off). The downloader keeps
// its own timeouts (connect 10 s, like [redfish], and a 60-second stall
// limit rather than an overall one: a large artifact takes as long as it
// takes while it keeps above the minimum rate). Open reaps leftover temporary files, so it runs
// before anything else downloads into firmware_dir.
func openCatalog(ctx context.Context, w config.Workflows, st store.Store, log logging.Logger) (*firmwareCatalog, error) {
	ctx, cancel := context.WithTimeout(ctx, catalogOpenTimeout)
	defer cancel()
	minRate := w.MinDownloadBytesPerSecond
	if minRate == 0 {
		minRate = -1 // off; the downloader reads 0 as its default
	}
	dl := download.New(download.Options{SourceRoot: w.FirmwareDir, MaxArtifactBytes: w.MaxArtifactBytes,
		Concurrency: config.DownloadSlots, MaxPerHost: w.MaxDownloadsPerHost,
		MinBytesPerSecond: minRate, RateWindow: time.Duration(w.DownloadRateWindowSeconds) * time.Second,
		AllowInsecureToken: w.AllowInsecureArtifactToken, Logger: log.Component("download")})
	svc, err := catalog.Open(ctx, catalog.Options{Store: st, Downloader: dl, Dir: w.FirmwareDir, Logger: log.Component("catalog")})
	if err != nil {
		dl.Close()
		return nil, fmt.Errorf("open the firmware catalog: %w", err)
	}
	return &firmwareCatalog{svc: svc, dl: dl}, nil
}

// Close cancels the catalog's downloads and waits for them; it must run
// before the store closes.
func (c *firmwareCatalog) Close() {
	if c == nil {
		return
	}
	c.svc.Close()
	c.dl.Close()
}
