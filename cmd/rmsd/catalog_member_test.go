package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// TestOpenCatalogWorksAsTheClusterMember checks the wiring of the firmware
// catalog: with [cluster] enabled, the objects a member adds record it as
// their downloader and its temporary download files carry its tag (so
// that the other members sharing firmware_dir leave them alone at their
// start); with the cluster disabled, neither.
func TestOpenCatalogWorksAsTheClusterMember(t *testing.T) {
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	log, err := logging.New(config.Default().Logging, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		cluster config.Cluster
		want    string // downloader
	}{
		{"member", config.Cluster{Enabled: true, MemberID: "rmsd-1"}, "rmsd-1"},
		{"single", config.Cluster{MemberID: "rmsd-1"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rel, err := simrelease.Publish(art, simrelease.Options{Milestone: tt.name})
			if err != nil {
				t.Fatal(err)
			}
			art.SetFault(rel.HMC.Path, artifactsim.Fault{Stall: true, StallAfter: 1024})
			st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			w := config.Default().Workflows
			w.FirmwareDir = t.TempDir()
			cat, err := openCatalog(ctx, w, catalogMember(tt.cluster), catalogClaimAfter(tt.cluster), st, log)
			if err != nil {
				t.Fatal(err)
			}
			defer cat.Close()
			obj, err := cat.svc.Add(ctx, catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
			if err != nil {
				t.Fatal(err)
			}
			if obj.Downloader != tt.want {
				t.Errorf("downloader %q, want %q", obj.Downloader, tt.want)
			}
			// The suffix after .part- is <tag>-<16 hex> for a member, <16 hex>
			// for a single rmsd.
			wantSuffix := regexp.MustCompile(`^[0-9a-f]{16}$`)
			if tag := download.MemberTag(tt.want); tag != "" {
				wantSuffix = regexp.MustCompile(`^` + tag + `-[0-9a-f]{16}$`)
			}
			prefix := "." + rel.HMC.Name + ".part-"
			dir := filepath.Join(w.FirmwareDir, "objects", rel.ID)
			for {
				entries, _ := os.ReadDir(dir)
				var temp string
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), prefix) {
						temp = e.Name()
					}
				}
				if temp != "" {
					if !wantSuffix.MatchString(strings.TrimPrefix(temp, prefix)) {
						t.Errorf("temporary file %s, want it named %s%s", temp, prefix, wantSuffix)
					}
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("no temporary file %s* in %s", prefix, dir)
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	}
}
