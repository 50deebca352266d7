package selector_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/selector"
)

func TestCheckInBand_FlintFamiliesOnGB200ComputeOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		t    hw.NodeType
		says string // "" = accepted
	}{
		{"CX7", hw.ComputeGB200Nvidia, ""},
		{"cx8", hw.ComputeGB200Wiwynn, ""},
		{"BF3_NIC", hw.ComputeGB200Nvidia, ""},
		{"BMC", hw.ComputeGB300Nvidia, ""},
		{"CX7", hw.ComputeGB300Nvidia, "only on GB200 compute nodes"},
		{"BF3_BFB", hw.ComputeGB200Nvidia, "rshim"},
	} {
		err := selector.CheckInBand(c.name, c.t)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s on %s: %v, want accepted", c.name, c.t.Name(), err)
		case c.says != "" && (!errors.Is(err, selector.ErrInBandNIC) || !strings.Contains(err.Error(), c.says)):
			t.Errorf("%s on %s: %v, want a refusal saying %q", c.name, c.t.Name(), err, c.says)
		}
	}
}
