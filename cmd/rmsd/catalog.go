package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/member"
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
// takes while it keeps above the minimum rate). Open reaps this process's leftover temporary
// files, so it runs before this process downloads anything into firmware_dir. member is the
// cluster member id ("" for a single rmsd; catalogMember): members share firmware_dir, and
// the downloader and the catalog both take it, so that each member's leftovers are told from
// the files of the downloads other members run meanwhile. claimAfter is how long another
// member's interrupted download must be quiet before this member takes it over
// (catalogClaimAfter; unused outside cluster mode).
func openCatalog(ctx context.Context, w config.Workflows, member string, claimAfter time.Duration, st store.Store, log logging.Logger) (*firmwareCatalog, error) {
	ctx, cancel := context.WithTimeout(ctx, catalogOpenTimeout)
	defer cancel()
	minRate := w.MinDownloadBytesPerSecond
	if minRate == 0 {
		minRate = -1 // off; the downloader reads 0 as its default
	}
	dl := download.New(download.Options{Member: member, SourceRoot: w.FirmwareDir, MaxArtifactBytes: w.MaxArtifactBytes,
		Concurrency: config.DownloadSlots, MaxPerHost: w.MaxDownloadsPerHost,
		MinBytesPerSecond: minRate, RateWindow: time.Duration(w.DownloadRateWindowSeconds) * time.Second,
		AllowInsecureToken: w.AllowInsecureArtifactToken, Logger: log.Component("download")})
	svc, err := catalog.Open(ctx, catalog.Options{Store: st, Downloader: dl, Dir: w.FirmwareDir, Member: member,
		ClaimAfter: claimAfter, Logger: log.Component("catalog")})
	if err != nil {
		dl.Close()
		return nil, fmt.Errorf("open the firmware catalog: %w", err)
	}
	return &firmwareCatalog{svc: svc, dl: dl}, nil
}

// catalogMember is the member id the firmware catalog and its downloader
// work for: [cluster] member_id when the cluster is enabled, "" otherwise.
func catalogMember(c config.Cluster) string {
	if !c.Enabled {
		return ""
	}
	return c.MemberID
}

// catalogClaimAfter is the bound after which a member's firmware catalog
// takes over another member's quiet interrupted download: six membership
// timeouts (member.DownloadClaimAfter).
func catalogClaimAfter(c config.Cluster) time.Duration {
	return member.DownloadClaimAfter(seconds(c.MembershipTimeoutSeconds))
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
