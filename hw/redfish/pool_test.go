package redfish_test

import (
	"testing"

	"github.com/rmsd/rmsd/hw/redfish"
)

// TestDefaultPoolKeepsEveryBMCOfALargeSiteConnected: a whole-site read of
// 300 racks (10,500 BMCs, the southbound harness's largest) finds every
// BMC's connection still pooled from the last read, instead of handshaking
// again with all but the first 4,096 as the pool once did.
func TestDefaultPoolKeepsEveryBMCOfALargeSiteConnected(t *testing.T) {
	const site = 300 * 35
	p := redfish.NewPool(redfish.Options{})
	defer p.Close()
	if got := p.Options().MaxIdleConns; got < site {
		t.Fatalf("the default pool keeps %d idle connections, fewer than the %d BMCs of a 300-rack site", got, site)
	}
}
