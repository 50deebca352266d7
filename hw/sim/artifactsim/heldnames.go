package artifactsim

import (
	"context"
	"slices"
)

// HeldNames returns the names of the artifacts whose requests are held
// right now, sorted; a name held by two requests is listed twice.
func (s *Server) HeldNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldNamesLocked()
}

func (s *Server) heldNamesLocked() []string {
	var out []string
	for name, n := range s.heldNames {
		for range n {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// WaitHeldNames waits until ok accepts the held names (as HeldNames
// returns them) and returns them; it is checked at once and whenever a
// request is held or let go.
func (s *Server) WaitHeldNames(ctx context.Context, ok func(names []string) bool) ([]string, error) {
	s.mu.Lock()
	for {
		names := s.heldNamesLocked()
		if ok(names) {
			s.mu.Unlock()
			return names, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			return nil, ErrClosed
		}
		s.mu.Lock()
	}
}
