package nvue

import (
	"context"
	"fmt"
	"strconv"
)

// System is GET /nvue_v1/system: NVOS's hello. Raw keeps every field.
type System struct {
	Hostname string
	Build    string
	Raw      map[string]any
}

// System reads /nvue_v1/system (also the credential and power probe).
func (c *Client) System(ctx context.Context) (System, error) {
	var m map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/system", &m); err != nil {
		return System{}, fmt.Errorf("read system: %w", err)
	}
	s := System{Raw: m}
	s.Hostname, _ = m["hostname"].(string)
	s.Build, _ = m["build"].(string)
	return s, nil
}

// PowerCycle starts @power-cycle (force) on /nvue_v1/system and returns the
// action id. The switch goes offline shortly after.
func (c *Client) PowerCycle(ctx context.Context) (string, error) {
	return c.postAction(ctx, "/nvue_v1/system", "power-cycle", map[string]any{"force": true})
}

// FactoryReset starts @reset (force) on /nvue_v1/system/factory-default.
// Afterwards the switch reboots with the factory admin/admin login, expired.
func (c *Client) FactoryReset(ctx context.Context) (string, error) {
	return c.postAction(ctx, "/nvue_v1/system/factory-default", "reset", map[string]any{"force": true})
}

// Platform is GET /nvue_v1/platform.
type Platform struct {
	ProductName  string `json:"product-name"`
	PartNumber   string `json:"part-number"`
	SerialNumber string `json:"serial-number"`
	Manufacturer string `json:"manufacturer"`
}

// Platform reads the switch's platform identity.
func (c *Client) Platform(ctx context.Context) (Platform, error) {
	var p Platform
	if err := c.getJSON(ctx, "/nvue_v1/platform", &p); err != nil {
		return Platform{}, fmt.Errorf("read platform: %w", err)
	}
	return p, nil
}

// ChassisLocation is GET /nvue_v1/platform/chassis-location, the tray's
// place in the rack.
type ChassisLocation struct {
	ChassisSerial string
	SlotNumber    int
	TopologyID    int
	TrayIndex     int
}

// ChassisLocation reads where the switch tray sits in its rack. Numbers may
// arrive as JSON numbers or strings.
func (c *Client) ChassisLocation(ctx context.Context) (ChassisLocation, error) {
	var m map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/platform/chassis-location", &m); err != nil {
		return ChassisLocation{}, fmt.Errorf("read chassis location: %w", err)
	}
	var loc ChassisLocation
	var ok bool
	if loc.ChassisSerial, ok = scalarString(m["chassis-sn"]); !ok {
		return ChassisLocation{}, fmt.Errorf("read chassis location: %w: no chassis-sn", ErrInvalidResponse)
	}
	for key, dst := range map[string]*int{"slot-number": &loc.SlotNumber, "topology-id": &loc.TopologyID, "tray-index": &loc.TrayIndex} {
		s, ok := scalarString(m[key])
		if !ok {
			return ChassisLocation{}, fmt.Errorf("read chassis location: %w: no %s", ErrInvalidResponse, key)
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return ChassisLocation{}, fmt.Errorf("read chassis location: %w: %s=%q", ErrInvalidResponse, key, s)
		}
		*dst = n
	}
	return loc, nil
}
