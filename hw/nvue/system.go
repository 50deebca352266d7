package nvue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
// place in the rack. Every field is optional: a key the switch leaves out,
// or whose value is null, empty or not an integer, is nil ("" for the
// serial).
type ChassisLocation struct {
	ChassisSerial string
	SlotNumber    *int64
	TopologyID    *int64
	TrayIndex     *int64
}

// ChassisLocation reads where the switch tray sits in its rack. Numbers may
// arrive as JSON numbers or strings.
func (c *Client) ChassisLocation(ctx context.Context) (ChassisLocation, error) {
	var m map[string]json.RawMessage
	if err := c.getJSON(ctx, "/nvue_v1/platform/chassis-location", &m); err != nil {
		return ChassisLocation{}, fmt.Errorf("read chassis location: %w", err)
	}
	return ChassisLocation{
		ChassisSerial: scalarText(m["chassis-sn"]),
		SlotNumber:    optionalInt(m["slot-number"]),
		TopologyID:    optionalInt(m["topology-id"]),
		TrayIndex:     optionalInt(m["tray-index"]),
	}, nil
}

// scalarText is a JSON string's value or a JSON number's literal text;
// anything else (absent, null, objects) is "".
func scalarText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// optionalInt reads a JSON integer or a string holding one; anything else
// (absent, null, "", text, fractions, numbers beyond int64) is nil.
func optionalInt(raw json.RawMessage) *int64 {
	n, err := strconv.ParseInt(scalarText(raw), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}
