package proclog_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/test/proclog"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lockedBuffer is the log file: written by Follow, read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// follow runs Follow on a pipe the test writes; it returns the pipe's
// writer and a channel that yields Follow's result.
func follow(t *testing.T, l *proclog.Log, file io.Writer, each func(proclog.Line)) (*io.PipeWriter, <-chan error) {
	t.Helper()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- l.Follow(r, file, each) }()
	t.Cleanup(func() {
		_ = w.Close()
		<-l.Done()
	})
	return w, done
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The addresses are known once every message named has been logged with
// one, in the order asked, whatever the order logged; every line, JSON or
// not, reaches the file; each decoded line reaches the callback.
func TestAddrsWaitsForEveryMessageAndEveryLineIsCopied(t *testing.T) {
	l := proclog.New()
	var file lockedBuffer
	var mu sync.Mutex
	var racks []string
	w, _ := follow(t, l, &file, func(line proclog.Line) {
		mu.Lock()
		defer mu.Unlock()
		if line.RackID != "" {
			racks = append(racks, line.RackID)
		}
	})
	got := make(chan []string, 1)
	errc := make(chan error, 1)
	go func() {
		a, err := l.Addrs(testCtx(t), "rmsd serving", "admin serving")
		got <- a
		errc <- err
	}()
	lines := []string{
		`{"message":"admin serving","addr":"127.0.0.1:2"}`,
		`not json at all`,
		`{"message":"rack serving on this member","rack_id":"rack-1"}`,
		`{"message":"rmsd serving","addr":"127.0.0.1:1"}`,
		`{"message":"rmsd serving","addr":"127.0.0.1:9"}`,
	}
	for _, line := range lines {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if a := <-got; strings.Join(a, ",") != "127.0.0.1:1,127.0.0.1:2" {
		t.Errorf("Addrs = %v, want the first address of each message in the order asked", a)
	}
	if err := l.Wait(testCtx(t), "rmsd serving", 2); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	<-l.Done()
	if file.String() != strings.Join(lines, "\n")+"\n" {
		t.Errorf("file = %q, want every line", file.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(racks, ",") != "rack-1" {
		t.Errorf("callback saw racks %v, want [rack-1]", racks)
	}
	if n := l.Count("rmsd serving"); n != 2 {
		t.Errorf("Count = %d, want 2", n)
	}
}

// A log that ends before the message is logged ends the wait with
// ErrEnded (the process exited), not at the deadline; a message logged
// just before the end still counts.
func TestWaitEndsWithTheLog(t *testing.T) {
	l := proclog.New()
	w, done := follow(t, l, io.Discard, nil)
	if _, err := io.WriteString(w, `{"message":"member drained"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if err := <-done; err != nil {
		t.Fatalf("Follow at EOF: %v", err)
	}
	if err := l.Wait(testCtx(t), "member drained", 1); err != nil {
		t.Errorf("Wait for a message logged before the end: %v", err)
	}
	if err := l.Wait(testCtx(t), "never logged", 1); !errors.Is(err, proclog.ErrEnded) {
		t.Errorf("Wait after the end = %v, want ErrEnded", err)
	}
	if _, err := l.Addrs(testCtx(t), "rmsd serving"); !errors.Is(err, proclog.ErrEnded) {
		t.Errorf("Addrs after the end = %v, want ErrEnded", err)
	}
}

// A wait bounded by a context that ends returns the context's error
// while the log goes on.
func TestWaitEndsWithItsContext(t *testing.T) {
	l := proclog.New()
	_, _ = follow(t, l, io.Discard, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.Wait(ctx, "never logged", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with an ended context = %v, want context.Canceled", err)
	}
}
