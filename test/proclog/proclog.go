// Package proclog follows the JSON log of a process a test harness
// started (rmsd as one daemon, or as a cluster member): it copies every
// line to a file, decodes the fields the harnesses read, hands each line
// to the caller, and lets callers wait until a message has been logged,
// or until the listen addresses carried by some messages are all known.
// It judges nothing; the callers do.
package proclog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Line is what a harness reads of one log line.
type Line struct {
	Message string `json:"message"`
	Addr    string `json:"addr"`
	RackID  string `json:"rack_id"`
}

// ErrEnded is returned by the waits when the log ended (the process
// closed its output, usually by exiting) before what they wait for.
var ErrEnded = errors.New("proclog: the log ended")

// Log is one run of a process's log. Its zero value is not usable; use New.
type Log struct {
	mu      sync.Mutex
	counts  map[string]int    // lines by message
	addrs   map[string]string // the first addr logged with each message
	changed chan struct{}     // closed and replaced at every decoded line
	done    chan struct{}     // closed when Follow returns
}

// New returns a Log that Follow fills.
func New() *Log {
	return &Log{counts: map[string]int{}, addrs: map[string]string{}, changed: make(chan struct{}), done: make(chan struct{})}
}

// Follow reads r line by line until it ends, appending each line to w and
// handing each line that decodes as JSON to each (when not nil) before
// waiters see it. It runs on the caller's goroutine and returns when r
// ends (at EOF, or on a read error, which it returns).
func (l *Log) Follow(r io.Reader, w io.Writer, each func(Line)) error {
	defer close(l.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		_, _ = w.Write(append(raw, '\n'))
		var line Line
		if json.Unmarshal(raw, &line) != nil {
			continue
		}
		if each != nil {
			each(line)
		}
		l.mu.Lock()
		l.counts[line.Message]++
		if _, ok := l.addrs[line.Message]; !ok && line.Addr != "" {
			l.addrs[line.Message] = line.Addr
		}
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("proclog: read the log: %w", err)
	}
	return nil
}

// Done is closed when Follow has returned.
func (l *Log) Done() <-chan struct{} { return l.done }

// Count returns how many lines logged message so far.
func (l *Log) Count(message string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[message]
}

// Wait waits until message has been logged at least n times in all.
func (l *Log) Wait(ctx context.Context, message string, n int) error {
	return l.until(ctx, fmt.Sprintf("%q logged %d times", message, n), func() bool { return l.counts[message] >= n })
}

// Addrs waits until each of messages has been logged with an addr field,
// and returns those addresses in the order of messages.
func (l *Log) Addrs(ctx context.Context, messages ...string) ([]string, error) {
	out := make([]string, len(messages))
	err := l.until(ctx, fmt.Sprintf("the addresses of %q", messages), func() bool {
		for i, m := range messages {
			if out[i] = l.addrs[m]; out[i] == "" {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// until waits until cond, read under l.mu, holds.
func (l *Log) until(ctx context.Context, what string, cond func() bool) error {
	for {
		l.mu.Lock()
		ok, changed := cond(), l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-l.done:
			// The last lines may have been decoded just before the end.
			l.mu.Lock()
			ok = cond()
			l.mu.Unlock()
			if ok {
				return nil
			}
			return fmt.Errorf("waiting for %s: %w", what, ErrEnded)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}
