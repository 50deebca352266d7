package nvue_test

import (
	"testing"

	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// Clients of one pool share its connections: several clients of the same
// switch, one after the other, cost the switch one TLS handshake, where a
// client with a pool of its own (nvue.New) costs one each.
func TestPoolClientsShareConnections(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	before := r.sw.NVUEConnections()
	pool, err := nvue.NewPool(options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for range 3 {
		c, err := pool.Client(r.sw.Endpoint())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.System(r.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ChassisLocation(r.ctx); err != nil {
			t.Fatal(err)
		}
		c.Close() // a pooled client releases nothing
	}
	if got := r.sw.NVUEConnections() - before; got != 1 {
		t.Fatalf("3 pooled clients opened %d connections, want 1", got)
	}

	before = r.sw.NVUEConnections()
	for range 3 {
		c := newClient(t, r.sw.Endpoint(), options())
		if _, err := c.System(r.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.sw.NVUEConnections() - before; got != 3 {
		t.Fatalf("3 clients with pools of their own opened %d connections, want 3", got)
	}
}

// Switch inventories keep one port column for SSH and NVUE: a host
// endpoint on port 0 or 22 means NVUE on Options.Port (443 by default).
func TestHostPortZeroOr22MeansTheNVUEPort(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	nvuePort := r.sw.Endpoint().Port
	for _, give := range []int{0, 22} {
		ep := r.sw.Endpoint()
		ep.Port = give
		opts := options()
		opts.Port = nvuePort
		if _, err := newClient(t, ep, opts).System(r.ctx); err != nil {
			t.Errorf("port %d with nvue port %d: %v", give, nvuePort, err)
		}
	}
	ep := r.sw.Endpoint()
	ep.Port = 0
	if _, err := newClient(t, ep, options()).System(r.ctx); err == nil {
		t.Errorf("port 0 without an nvue port reached the switch on %d, want 443", nvuePort)
	}
}
