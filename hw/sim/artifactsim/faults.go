package artifactsim

import (
	"context"
	"errors"
	"time"
)

// Fault is how the server misbehaves for one artifact. The zero value
// serves it normally.
type Fault struct {
	// Status answers this HTTP status (e.g. 404, 500, 503) instead of the file.
	Status int
	// WrongBytes serves content of the right length but not the published
	// bytes, so its SHA-256 does not match.
	WrongBytes bool
	// Stall stops sending after StallAfter bytes (0: right after the
	// headers) and keeps the connection open until the client gives up or
	// the server closes.
	Stall      bool
	StallAfter int64
	// Throttle pauses this long between chunks of ChunkBytes (default 32 KiB).
	Throttle   time.Duration
	ChunkBytes int
	// NoLength omits Content-Length (the body is chunked).
	NoLength bool
	// Hold makes each request wait, in flight, until Release lets it go.
	Hold bool
	// RedirectTo answers 302 to this URL.
	RedirectTo string
}

// SetFault sets the fault of the artifact published as name; the zero
// Fault restores normal service.
func (s *Server) SetFault(name string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[trimName(name)] = f
}

// Release lets n held requests (present or future) proceed.
func (s *Server) Release(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.permits += n
	s.notifyLocked()
}

// Held returns how many requests wait for Release right now.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// InFlight returns how many requests are being answered right now. A
// request counts from its arrival until just before its last byte is
// written, so a client never starts another while this still counts it.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxInFlight returns the most requests ever in flight at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxIn
}

// ErrClosed is returned by WaitHeld when the server closes first.
var ErrClosed = errors.New("artifactsim: server closed")

// WaitHeld waits until at least n requests are held.
func (s *Server) WaitHeld(ctx context.Context, n int) error {
	s.mu.Lock()
	for s.held < n {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return ErrClosed
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

// waitPermit holds a request until Release, the client leaving or Close.
func (s *Server) waitPermit(ctx context.Context, name string) bool {
	s.mu.Lock()
	s.held++
	s.heldNames[name]++
	s.notifyLocked()
	defer func() {
		s.held--
		if s.heldNames[name]--; s.heldNames[name] == 0 {
			delete(s.heldNames, name)
		}
		s.notifyLocked()
		s.mu.Unlock()
	}()
	for s.permits == 0 {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			return false
		case <-s.done:
			s.mu.Lock()
			return false
		}
		s.mu.Lock()
	}
	s.permits--
	return true
}
