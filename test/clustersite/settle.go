package clustersite

import (
	"context"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/store"
)

// Settled reports whether ownership of racks has settled across members:
// every rack has exactly one live grain among them, on the member that
// holds the rack's unexpired lease in the store. It returns the leases by
// rack, or why it has not settled.
func (s *Site) Settled(ctx context.Context, racks []string, members ...*Member) (map[string]store.RackLease, string) {
	leases := map[string]store.RackLease{}
	for _, r := range racks {
		var on []string
		for _, m := range members {
			switch n := m.Grains()[r]; n {
			case 0:
			case 1:
				on = append(on, m.ID)
			default:
				return nil, fmt.Sprintf("rack %s: %d live grains on %s", r, n, m.ID)
			}
		}
		if len(on) != 1 {
			return nil, fmt.Sprintf("rack %s: live grains on %v", r, on)
		}
		l, err := s.Store.RackOwner(ctx, r)
		if err != nil {
			return nil, fmt.Sprintf("rack %s: %v", r, err)
		}
		if l.Member != on[0] || !l.Expires.After(time.Now()) {
			return nil, fmt.Sprintf("rack %s: grain on %s, lease %+v", r, on[0], l)
		}
		leases[r] = l
	}
	return leases, ""
}

// UntilSettled waits, within the site's Wait, until Settled holds, and
// returns the leases by rack.
func (s *Site) UntilSettled(ctx context.Context, racks []string, members ...*Member) (map[string]store.RackLease, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Wait)
	defer cancel()
	poll := time.NewTicker(100 * time.Millisecond) // reads logs and store again; a bounded poll
	defer poll.Stop()
	for {
		leases, why := s.Settled(ctx, racks, members...)
		if why == "" {
			return leases, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ownership did not settle within %s: %s", s.o.Wait, why)
		case <-poll.C:
		}
	}
}

// RackIDs returns the simulated racks' ids.
func (s *Site) RackIDs() []string {
	var out []string
	for r := range s.Racks {
		out = append(out, r)
	}
	return out
}
