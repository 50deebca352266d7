package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Topology is a tray's position in the MNNVLink domain, as reported by a
// processor's Oem.Nvidia.MNNVLinkTopology. Every field is optional: a key
// the BMC leaves out, or whose value is null, empty or not an integer, is
// nil ("" for the serial).
type Topology struct {
	ChassisSerialNumber string
	TraySlotNumber      *int64
	TraySlotIndex       *int64
}

// scalar keeps a JSON string's value or a JSON number's literal text;
// anything else (null, objects, arrays) reads as "".
type scalar string

func (s *scalar) UnmarshalJSON(b []byte) error {
	var str string
	if json.Unmarshal(b, &str) == nil {
		*s = scalar(strings.TrimSpace(str))
		return nil
	}
	var n json.Number
	if json.Unmarshal(b, &n) == nil {
		*s = scalar(n.String())
		return nil
	}
	*s = ""
	return nil
}

// optionalInt is an integer, or nil when s does not hold one (empty, text,
// a fraction, beyond int64).
func (s scalar) optionalInt() *int64 {
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// MNNVLinkTopology walks ServiceRoot → Systems → each system → Processors →
// each processor and returns the first MNNVLinkTopology found.
func (c *Client) MNNVLinkTopology(ctx context.Context) (Topology, error) {
	root, err := c.ServiceRoot(ctx)
	if err != nil {
		return Topology{}, fmt.Errorf("device info: %w", err)
	}
	systems, err := c.members(ctx, collectionPath(root.Systems, "/redfish/v1/Systems"))
	if err != nil {
		return Topology{}, fmt.Errorf("device info: list systems: %w", err)
	}
	for _, su := range systems {
		var s system
		if err := c.get(ctx, su, &s); err != nil {
			return Topology{}, fmt.Errorf("device info: %w", err)
		}
		if s.Processors.ID == "" {
			continue
		}
		procs, err := c.members(ctx, s.Processors.ID)
		if err != nil {
			return Topology{}, fmt.Errorf("device info: list processors: %w", err)
		}
		for _, pu := range procs {
			var p struct {
				Oem struct {
					Nvidia struct {
						Topo *struct {
							ChassisSerialNumber scalar `json:"ChassisSerialNumber"`
							TraySlotNumber      scalar `json:"TraySlotNumber"`
							TraySlotIndex       scalar `json:"TraySlotIndex"`
						} `json:"MNNVLinkTopology"`
					} `json:"Nvidia"`
				} `json:"Oem"`
			}
			var raw json.RawMessage
			if err := c.get(ctx, pu, &raw); err != nil {
				return Topology{}, fmt.Errorf("device info: %w", err)
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				return Topology{}, fmt.Errorf("device info: processor %s: %w: %v", pu, ErrInvalidResponse, err)
			}
			if t := p.Oem.Nvidia.Topo; t != nil {
				return Topology{
					ChassisSerialNumber: string(t.ChassisSerialNumber),
					TraySlotNumber:      t.TraySlotNumber.optionalInt(),
					TraySlotIndex:       t.TraySlotIndex.optionalInt(),
				}, nil
			}
		}
	}
	return Topology{}, fmt.Errorf("device info: no processor reports MNNVLinkTopology: %w", ErrNotFound)
}
