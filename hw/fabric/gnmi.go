package fabric

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/pause"
)

// GNMI reads whether the gNMI server is enabled (nv show system
// gnmi-server -o json over SSH).
func (s *Switch) GNMI(ctx context.Context) (bool, error) {
	on, err := s.gnmiState(ctx)
	if err != nil {
		return false, s.fail("read gnmi server state", err)
	}
	return on, nil
}

func (s *Switch) gnmiState(ctx context.Context) (bool, error) {
	out, err := s.runNV(ctx, "nv show system gnmi-server -o json")
	if err != nil {
		return false, err
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &m); err != nil {
		return false, fmt.Errorf("nv show system gnmi-server: not JSON: %v", err)
	}
	return stateOf(m) == "enabled", nil
}

func stateOf(m map[string]any) string {
	if s, ok := m["state"].(string); ok {
		return s
	}
	for _, k := range []string{"applied", "operational"} {
		if inner, ok := m[k].(map[string]any); ok {
			if s, ok := inner["state"].(string); ok {
				return s
			}
		}
	}
	return ""
}

// SetGNMI turns the gNMI server on or off (nv set system gnmi-server state,
// apply, save over SSH), waits GNMISettle and reads the state back, then
// again after each of GNMIVerifyDelays until it shows.
func (s *Switch) SetGNMI(ctx context.Context, enabled bool) error {
	want := onOff(enabled)
	if _, err := s.runNV(ctx, "nv set system gnmi-server state "+want, "nv config apply --assume-yes", "nv config save"); err != nil {
		return s.fail("set gnmi server "+want, err)
	}
	if err := pause.For(ctx, s.timing.GNMISettle); err != nil {
		return s.fail("set gnmi server "+want, err)
	}
	var lastErr error
	for i := 0; i <= len(s.timing.GNMIVerifyDelays); i++ {
		if i > 0 {
			if err := pause.For(ctx, s.timing.GNMIVerifyDelays[i-1]); err != nil {
				return s.fail("verify gnmi server "+want, err)
			}
		}
		on, err := s.gnmiState(ctx)
		if err == nil && on == enabled {
			return nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return s.fail("verify gnmi server "+want, fmt.Errorf("%w (last error: %v)", errNotVerified, lastErr))
	}
	return s.fail("verify gnmi server "+want, errNotVerified)
}

// GNMICapabilities calls gNMI Capabilities with the switch's credentials
// (the post-enable connectivity test) and returns the gNMI version.
func (s *Switch) GNMICapabilities(ctx context.Context) (string, error) {
	v, err := gnmicap.Capabilities(ctx, s.ep, s.opts.GNMI)
	if err != nil {
		return "", s.fail("gnmi capabilities", err)
	}
	return v, nil
}
