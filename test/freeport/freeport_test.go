package freeport_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/rmsd/rmsd/test/freeport"
)

// TestPortsAreDistinctBindableAndBelowTheEphemeralRange: every port handed
// out can be bound on every interface, none twice, none in the range the
// kernel hands outgoing connections.
func TestPortsAreDistinctBindableAndBelowTheEphemeralRange(t *testing.T) {
	ports, err := freeport.Ports(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
		if p < freeport.First || p >= freeport.Last {
			t.Errorf("port %d outside %d–%d", p, freeport.First, freeport.Last)
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			t.Errorf("port %d handed out but not bindable: %v", p, err)
			continue
		}
		_ = l.Close()
	}
}
