package nvssvt

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rmsd/rmsd/hw"
)

// tailBytes is how much of stderr a Result quotes.
const tailBytes = 1024

// capture keeps the first max bytes written to it and counts the rest,
// which it drops (the process keeps writing; it is never blocked). On
// close it writes what it kept to its file, every secret replaced by
// [REDACTED] (hw.Scrub). It is safe for concurrent use.
//
// A secret split across writes is whole in what is kept, and scrubbed
// there; one that a cut splits (the cap, the start of the tail) is not, so
// the part of it on the kept side of the cut is dropped as well.
type capture struct {
	path    string
	max     int64
	secrets []string
	forms   []string // what hw.Scrub replaces for secrets

	mu      sync.Mutex
	kept    []byte
	dropped int64
	written int64
	tail    []byte // the last tailBytes written, dropped bytes included
}

func newCapture(path string, max int64, secrets []string) (*capture, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return &capture{path: path, max: max, secrets: secrets, forms: hw.ScrubForms(secrets...)}, nil
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - int64(len(c.kept))
	switch {
	case room >= int64(len(p)):
		c.kept = append(c.kept, p...)
	case room > 0:
		c.kept = append(c.kept, p[:room]...)
		c.dropped += int64(len(p)) - room
	default:
		c.dropped += int64(len(p))
	}
	c.written += int64(len(p))
	c.tail = append(c.tail, p...)
	if len(c.tail) > tailBytes {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-tailBytes:]...)
	}
	return len(p), nil
}

func (c *capture) truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped > 0
}

// tailText is the end of the output, scrubbed and valid UTF-8. When the
// output is longer than the tail, the end of a secret the tail's start cut
// is left out.
func (c *capture) tailText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if c.written > int64(len(tail)) {
		tail = tail[cutEnd(tail, c.forms):]
	}
	return strings.ToValidUTF8(hw.Scrub(string(tail), c.secrets...), "")
}

// close writes the kept output to the file. When output was dropped, the
// start of a secret the cap cut is dropped too.
func (c *capture) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept, dropped := c.kept, c.dropped
	if dropped > 0 {
		n := cutStart(kept, c.forms)
		kept, dropped = kept[:len(kept)-n], dropped+int64(n)
	}
	out := hw.Scrub(string(kept), c.secrets...)
	if dropped > 0 {
		out += "\n[rmsd: " + strconv.FormatInt(dropped, 10) + " more bytes dropped: output is capped at [workflows] nvssvt_max_output_bytes]\n"
	}
	_ = os.WriteFile(c.path, []byte(out), 0o600) // best effort: the run's outcome does not depend on its log
}

// cutStart is the length of the longest end of b that is the start of one
// of forms, and not the whole of it: a secret b's end cuts short.
func cutStart(b []byte, forms []string) int {
	n := 0
	for _, f := range forms {
		for k := min(len(f)-1, len(b)); k > n; k-- {
			if string(b[len(b)-k:]) == f[:k] {
				n = k
				break
			}
		}
	}
	return n
}

// cutEnd is the length of the longest start of b that is the end of one
// of forms, and not the whole of it: a secret b's start cuts short.
func cutEnd(b []byte, forms []string) int {
	n := 0
	for _, f := range forms {
		for k := min(len(f)-1, len(b)); k > n; k-- {
			if string(b[:k]) == f[len(f)-k:] {
				n = k
				break
			}
		}
	}
	return n
}
