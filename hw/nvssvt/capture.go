package nvssvt

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// tailBytes is how much of stderr a Result quotes.
const tailBytes = 1024

// capture keeps the first max bytes written to it and counts the rest,
// which it drops (the process keeps writing; it is never blocked). On
// close it writes what it kept to its file, every secret replaced by
// [REDACTED]. It is safe for concurrent use.
type capture struct {
	path    string
	max     int64
	secrets []string

	mu      sync.Mutex
	kept    []byte
	dropped int64
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
	return &capture{path: path, max: max, secrets: secrets}, nil
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

// tailText is the end of the output, scrubbed and valid UTF-8.
func (c *capture) tailText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(scrub(string(c.tail), c.secrets), "")
}

// close writes the kept output to the file.
func (c *capture) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := scrub(string(c.kept), c.secrets)
	if c.dropped > 0 {
		out += "\n[rmsd: " + strconv.FormatInt(c.dropped, 10) + " more bytes dropped: output is capped at [workflows] nvssvt_max_output_bytes]\n"
	}
	_ = os.WriteFile(c.path, []byte(out), 0o600) // best effort: the run's outcome does not depend on its log
}

// scrub replaces every secret in s.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}
