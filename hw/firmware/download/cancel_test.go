package download_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

func TestDownload_CancelMidTransferLeavesNoFile(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.PublishPackage("p/simfw-bmc-3.0.fwpkg", "3.0", 1<<20)
	s.SetFault("p/simfw-bmc-3.0.fwpkg", artifactsim.Fault{Stall: true, StallAfter: 512 << 10})
	d, logs := newDownloader(t, download.Options{})
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	type outcome struct {
		results []download.Result
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := d.Download(ctx, dir, artifactsOf(t, "HTTP", a), hw.Secret{})
		done <- outcome{r, err}
	}()
	// Half the artifact has been written to the temporary file.
	logs.waitFor(t, testCtx(t), 1, `"percent":50`)
	tmp := files(t, dir)
	if len(tmp) != 1 || !strings.HasPrefix(tmp[0], "."+a.Name+".part-") {
		t.Fatalf("mid-transfer the cache holds %q, want one temporary file", tmp)
	}
	cancel() // as DeleteFirmwareObject does for an in-flight download
	o := <-done
	if !errors.Is(o.err, context.Canceled) || !strings.Contains(o.results[0].Err.Error(), "download interrupted: context canceled") {
		t.Fatalf("got %v", o.err)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Fatalf("left %q after the cancellation", f)
	}
}

func TestDownload_StallFailsTheArtifact(t *testing.T) {
	for _, after := range []int64{0, 100} {
		s := startServer(t, artifactsim.Options{})
		a := s.Publish("p/x.fwpkg", make([]byte, 4096))
		s.SetFault("p/x.fwpkg", artifactsim.Fault{Stall: true, StallAfter: after})
		d, _ := newDownloader(t, download.Options{StallTimeout: 100 * time.Millisecond})
		dir := t.TempDir()
		_, err := d.Download(testCtx(t), dir, artifactsOf(t, "HTTP", a), hw.Secret{})
		if !errors.Is(err, download.ErrStalled) || !strings.Contains(err.Error(), "transfer stalled: no data for 100ms") {
			t.Fatalf("stall after %d bytes: %v", after, err)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("left %q", f)
		}
	}
}

func TestDownload_SlowButMovingIsNotAStall(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.Publish("p/x.fwpkg", make([]byte, 64<<10))
	s.SetFault("p/x.fwpkg", artifactsim.Fault{Throttle: time.Millisecond, ChunkBytes: 4 << 10})
	d, _ := newDownloader(t, download.Options{StallTimeout: 5 * time.Second})
	if _, err := d.Download(testCtx(t), t.TempDir(), artifactsOf(t, "HTTP", a), hw.Secret{}); err != nil {
		t.Fatal(err)
	}
}

func TestDownload_CancelWhileWaitingForASlot(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	first := s.Publish("p/first.fwpkg", []byte("first"))
	second := s.Publish("p/second.fwpkg", []byte("second"))
	for _, p := range []string{"p/first.fwpkg", "p/second.fwpkg"} {
		s.SetFault(p, artifactsim.Fault{Hold: true})
	}
	d, logs := newDownloader(t, download.Options{Concurrency: 1})
	dir := filepath.Join(t.TempDir(), "obj")
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := d.Download(ctx, dir, artifactsOf(t, "HTTP", first, second), hw.Secret{})
		done <- err
	}()
	// One holds the only slot (its request held by the server), the other waits.
	if err := s.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, testCtx(t), 1, "artifact waiting for a download slot")
	waiting := "/p/first.fwpkg"
	if logs.count("artifact waiting for a download slot", `"artifact":"second.fwpkg"`) == 1 {
		waiting = "/p/second.fwpkg"
	}
	cancel()
	err := <-done
	var de *download.Error
	if !errors.As(err, &de) || len(de.Failed) != 2 || !errors.Is(de.Failed[0], context.Canceled) || !errors.Is(de.Failed[1], context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Errorf("left %q", f)
	}
	for _, r := range s.Requests() {
		if r.Path == waiting {
			t.Errorf("%s was requested after the cancellation", waiting)
		}
	}
}
