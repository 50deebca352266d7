package download_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func startServer(t *testing.T, o artifactsim.Options) *artifactsim.Server {
	t.Helper()
	s, err := artifactsim.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// newDownloader returns a Downloader logging into a logWatch.
func newDownloader(t *testing.T, o download.Options) (*download.Downloader, *logWatch) {
	t.Helper()
	w := &logWatch{changed: make(chan struct{})}
	o.Logger = zerolog.New(w).Level(zerolog.DebugLevel)
	d := download.New(o)
	t.Cleanup(d.Close)
	return d, w
}

// artifactsOf writes a manifest whose Switch Tray SKU has one firmware
// entry per published artifact, with the given LocationType, and returns
// what manifest.Parse makes of it: the downloads go through the real
// manifest path.
func artifactsOf(t *testing.T, locationType string, arts ...artifactsim.Artifact) []manifest.Artifact {
	t.Helper()
	var entries []any
	for i, a := range arts {
		entries = append(entries, map[string]any{
			"Component": fmt.Sprintf("C%d", i), "Version": "1.0", "Type": "Prod",
			"Locations": []any{map[string]any{
				"Location": a.URL, "LocationType": locationType, "FileName": a.Name, "Type": "Firmware", "Sha256": a.Sha256,
			}},
		})
	}
	b, err := json.Marshal(map[string]any{"ProductName": "DGXGB200", "Milestones": []any{map[string]any{
		"Name": "1.0", "BoardSKUs": []any{map[string]any{"Type": "Switch Tray", "Components": map[string]any{"Firmware": entries}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(b, manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Artifacts(); len(got) != len(arts) {
		t.Fatalf("manifest has %d artifacts, want %d", len(got), len(arts))
	}
	return m.Artifacts()
}

// files lists every name below dir (hidden ones included), sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// logWatch collects log output and lets a test wait for lines.
type logWatch struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func (w *logWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// count returns how many log lines contain every one of parts.
func (w *logWatch) count(parts ...string) int {
	n := 0
	for _, line := range strings.Split(w.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// waitFor waits until n log lines contain every one of parts.
func (w *logWatch) waitFor(t *testing.T, ctx context.Context, n int, parts ...string) {
	t.Helper()
	for {
		w.mu.Lock()
		ch := w.changed
		w.mu.Unlock()
		if w.count(parts...) >= n {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no %d log lines with %q; logs:\n%s", n, parts, w.String())
		}
	}
}
