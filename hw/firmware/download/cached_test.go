package download_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/firmware/confine"
	"github.com/rmsd/rmsd/hw/firmware/download"
)

func TestVerify_ChecksTheCacheWithoutFetching(t *testing.T) {
	dir := t.TempDir()
	body := []byte("cached firmware package")
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])
	if err := os.WriteFile(filepath.Join(dir, "bmc.fwpkg"), body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.fwpkg"), 0o750); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		dir, file string
		sha       string
		want      error // nil: verified
	}{
		{"present with its digest", dir, "bmc.fwpkg", digest, nil},
		{"digest in upper case", dir, "bmc.fwpkg", strings.ToUpper(digest), nil},
		{"other digest", dir, "bmc.fwpkg", strings.Repeat("0", 64), download.ErrChecksum},
		{"absent", dir, "cpld.fwpkg", digest, download.ErrNotCached},
		{"a directory", dir, "sub.fwpkg", digest, download.ErrNotCached},
		{"no directory", filepath.Join(dir, "missing"), "bmc.fwpkg", digest, download.ErrNotCached},
		{"no digest", dir, "bmc.fwpkg", "", download.ErrNoChecksum},
		{"escaping name", dir, "../bmc.fwpkg", digest, confine.ErrEscapes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := download.Verify(context.Background(), tt.dir, tt.file, tt.sha)
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				if res.Path != "" {
					t.Errorf("a refusal with path %q", res.Path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != filepath.Join(dir, "bmc.fwpkg") || res.Size != int64(len(body)) || !res.Reused || res.Name != "bmc.fwpkg" {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestVerify_StopsWhenTheContextEnds(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := download.Verify(ctx, dir, "big.bin", strings.Repeat("a", 64))
	if !errors.Is(err, context.Canceled) || errors.Is(err, download.ErrChecksum) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
}
