package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Topology is a tray's position in the MNNVLink domain, as reported by a
// processor's Oem.Nvidia.MNNVLinkTopology.
type Topology struct {
	ChassisSerialNumber string
	TraySlotNumber      int
	TraySlotIndex       int
}

// flexInt decodes a JSON number or numeric string.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %s", s)
	}
	*f = flexInt(n)
	return nil
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
							ChassisSerialNumber string  `json:"ChassisSerialNumber"`
							TraySlotNumber      flexInt `json:"TraySlotNumber"`
							TraySlotIndex       flexInt `json:"TraySlotIndex"`
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
					ChassisSerialNumber: t.ChassisSerialNumber,
					TraySlotNumber:      int(t.TraySlotNumber),
					TraySlotIndex:       int(t.TraySlotIndex),
				}, nil
			}
		}
	}
	return Topology{}, fmt.Errorf("device info: no processor reports MNNVLinkTopology: %w", ErrNotFound)
}
