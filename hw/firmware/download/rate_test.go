package download_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// TestDownload_TrickleFailsByTheMinimumRate: a server that sends one byte
// every few milliseconds never trips the stall timer, which each byte
// restarts; the minimum rate fails it about one window after it starts,
// with an error naming the host and the rate. The bound is 20 windows,
// far above the one window (plus a sampling step) the rule needs.
func TestDownload_TrickleFailsByTheMinimumRate(t *testing.T) {
	const window = 500 * time.Millisecond
	s := startServer(t, artifactsim.Options{})
	a := s.Publish("p/trickle.fwpkg", make([]byte, 1<<20))
	s.SetFault("p/trickle.fwpkg", artifactsim.Fault{Throttle: 5 * time.Millisecond, ChunkBytes: 1})
	d, _ := newDownloader(t, download.Options{StallTimeout: time.Minute, MinBytesPerSecond: 64 << 10, RateWindow: window})
	dir := t.TempDir()
	start := time.Now()
	_, err := d.Download(testCtx(t), dir, artifactsOf(t, "HTTP", a), hw.Secret{})
	elapsed := time.Since(start)
	if !errors.Is(err, download.ErrTooSlow) {
		t.Fatalf("got %v, want ErrTooSlow", err)
	}
	var re *download.RateError
	if !errors.As(err, &re) || re.Window != window || re.Min != 64<<10 || re.Bytes <= 0 || re.Bytes >= 64<<10 {
		t.Fatalf("got %#v, want a RateError over %s with some bytes, below the minimum", re, window)
	}
	u, _ := url.Parse(a.URL)
	for _, part := range []string{"transfer too slow", u.Host, "bytes/s", "the minimum is 65536 bytes/s"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if elapsed > 20*window {
		t.Errorf("failed after %s, want within 20 windows of %s", elapsed, window)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Errorf("left %q", f)
	}
}

// TestDownload_SteadyTransferAboveTheMinimumRateSucceeds: a transfer
// that runs for several windows above the minimum is never judged too
// slow.
func TestDownload_SteadyTransferAboveTheMinimumRateSucceeds(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.Publish("p/steady.fwpkg", make([]byte, 512<<10))
	// About 200 KiB/s for about 2.6 s, over two windows of 1 s; the
	// minimum, 8 KiB/s, is a 25th of that.
	s.SetFault("p/steady.fwpkg", artifactsim.Fault{Throttle: 10 * time.Millisecond, ChunkBytes: 2 << 10})
	d, _ := newDownloader(t, download.Options{MinBytesPerSecond: 8 << 10, RateWindow: time.Second})
	if _, err := d.Download(testCtx(t), t.TempDir(), artifactsOf(t, "HTTP", a), hw.Secret{}); err != nil {
		t.Fatal(err)
	}
}
