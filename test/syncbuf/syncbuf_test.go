package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/test/syncbuf"
)

// TestConcurrentWritesAreAllKept: lines written from many goroutines while
// the test reads are all there, whole, at the end (run with -race).
func TestConcurrentWritesAreAllKept(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	const writers, lines = 8, 100
	for range writers {
		wg.Go(func() {
			for range lines {
				if _, err := b.Write([]byte("line\n")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	_ = b.String()
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != writers*lines {
		t.Fatalf("%d lines, want %d", got, writers*lines)
	}
}
