package nvossim

import "time"

// FailSpdmComponent makes every @generate of component started from now on
// end in action_error with msg as its issue; an empty msg clears the
// fault. The component's earlier evidence is kept.
func (s *Switch) FailSpdmComponent(component, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spdm.failing == nil {
		s.spdm.failing = map[string]string{}
	}
	if msg == "" {
		delete(s.spdm.failing, component)
	} else {
		s.spdm.failing[component] = msg
	}
	s.log.Info().Str("component", component).Str("issue", msg).Msg("fault: fail SPDM generation")
}

// SlowSpdmGeneration makes every @generate of component started from now on
// run for d of wall-clock time (d <= 0 restores the normal length), e.g.
// longer than a caller's deadline.
func (s *Switch) SlowSpdmGeneration(component string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spdm.slow == nil {
		s.spdm.slow = map[string]time.Duration{}
	}
	if d <= 0 {
		delete(s.spdm.slow, component)
	} else {
		s.spdm.slow[component] = d
	}
	s.log.Info().Str("component", component).Dur("for_ms", d).Msg("fault: slow SPDM generation")
}
