package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ShelfStyle selects how a power shelf exposes power control.
type ShelfStyle int

// The power-shelf styles RMS knows.
const (
	// ShelfLiteOn is the LiteOn / NVIDIA-PMC style: #Chassis.On/Off/ForceOff
	// actions with ActionInfo on a chassis named "powershelf...".
	ShelfLiteOn ShelfStyle = iota + 1
	// ShelfDelta is the Delta style: PSU state under Oem.deltaenergysystems
	// and TurnOnPSUs/TurnOffPSUs actions on /redfish/v1/PowerEquipment.
	ShelfDelta
)

// String returns "liteon" or "delta".
func (s ShelfStyle) String() string {
	switch s {
	case ShelfLiteOn:
		return "liteon"
	case ShelfDelta:
		return "delta"
	default:
		return fmt.Sprintf("ShelfStyle(%d)", int(s))
	}
}

// ShelfIntent is the requested power-shelf outcome.
type ShelfIntent int

// Power-shelf intents: On (also ForceOn), graceful Off, ForceOff.
const (
	ShelfOn ShelfIntent = iota + 1
	ShelfOff
	ShelfForceOff
)

// PSU is one power supply's state.
type PSU struct {
	URI   string
	ID    string
	State PowerState
}

// chassis is the part of a Chassis resource RMS uses.
type chassis struct {
	ID             string                     `json:"Id"`
	Name           string                     `json:"Name"`
	Manufacturer   string                     `json:"Manufacturer"`
	PowerSubsystem link                       `json:"PowerSubsystem"`
	Oem            map[string]json.RawMessage `json:"Oem"`
	Actions        actions                    `json:"Actions"`
}

// hasDeltaMarker reports whether a resource names Delta as its maker.
func hasDeltaMarker(manufacturer string, oem map[string]json.RawMessage) bool {
	if strings.Contains(strings.ToLower(manufacturer), "delta") {
		return true
	}
	for k := range oem {
		if strings.Contains(strings.ToLower(k), "delta") {
			return true
		}
	}
	return false
}

// shelfChassis discovers the chassis that holds the PSUs. It walks the
// chassis collection on every call, so a client kept across operations
// (hw/nodeops reuses a node's) sends the requests a fresh one would, and
// follows a shelf whose chassis changed.
func (c *Client) shelfChassis(ctx context.Context, style ShelfStyle) (string, error) {
	uris, err := c.members(ctx, "/redfish/v1/Chassis")
	if err != nil {
		return "", fmt.Errorf("list chassis: %w", err)
	}
	found := ""
	switch style {
	case ShelfLiteOn:
		for _, u := range uris {
			if strings.HasPrefix(strings.ToLower(lastSegment(u)), "powershelf") {
				found = u
				break
			}
		}
	case ShelfDelta:
		fallback := ""
		for _, u := range uris {
			var ch chassis
			if c.get(ctx, u, &ch) != nil || ch.PowerSubsystem.ID == "" {
				continue // failed members are skipped
			}
			if hasDeltaMarker(ch.Manufacturer, ch.Oem) {
				found = u
				break
			}
			if fallback == "" {
				fallback = u
			}
		}
		if found == "" {
			found = fallback
		}
	default:
		return "", fmt.Errorf("power shelf style %s: %w", style, ErrActionUnavailable)
	}
	if found == "" {
		return "", fmt.Errorf("no %s power-shelf chassis among %d: %w", style, len(uris), ErrNotFound)
	}
	return found, nil
}

// ShelfPSUs reads every PSU's power state through the chassis
// PowerSubsystem.
func (c *Client) ShelfPSUs(ctx context.Context, style ShelfStyle) ([]PSU, error) {
	chURI, err := c.shelfChassis(ctx, style)
	if err != nil {
		return nil, fmt.Errorf("read psus: %w", err)
	}
	var ch chassis
	if err := c.get(ctx, chURI, &ch); err != nil {
		return nil, fmt.Errorf("read psus: %w", err)
	}
	if ch.PowerSubsystem.ID == "" {
		return nil, fmt.Errorf("read psus: chassis %s has no PowerSubsystem: %w", chURI, ErrInvalidResponse)
	}
	var sub struct {
		PowerSupplies link `json:"PowerSupplies"`
	}
	if err := c.get(ctx, ch.PowerSubsystem.ID, &sub); err != nil {
		return nil, fmt.Errorf("read psus: %w", err)
	}
	if sub.PowerSupplies.ID == "" {
		return nil, fmt.Errorf("read psus: no PowerSupplies link: %w", ErrInvalidResponse)
	}
	uris, err := c.members(ctx, sub.PowerSupplies.ID)
	if err != nil {
		return nil, fmt.Errorf("read psus: %w", err)
	}
	out := make([]PSU, 0, len(uris))
	for _, u := range uris {
		var p struct {
			ID         string          `json:"Id"`
			PowerState json.RawMessage `json:"PowerState"`
			Oem        struct {
				Delta struct {
					Power json.RawMessage `json:"Power"`
				} `json:"deltaenergysystems"`
			} `json:"Oem"`
		}
		if err := c.get(ctx, u, &p); err != nil {
			return nil, fmt.Errorf("read psu %s: %w", u, err)
		}
		raw := p.PowerState
		if style == ShelfDelta && len(p.Oem.Delta.Power) > 0 {
			raw = p.Oem.Delta.Power
		}
		out = append(out, PSU{URI: u, ID: p.ID, State: parsePowerState(raw)})
	}
	return out, nil
}

// AggregatePSUs folds PSU states into a shelf state: any PSU off → Off,
// all on → On, otherwise (none, or some unknown) → Unknown.
func AggregatePSUs(psus []PSU) PowerState {
	if len(psus) == 0 {
		return PowerUnknown
	}
	allOn := true
	for _, p := range psus {
		if p.State == PowerOff {
			return PowerOff
		}
		if p.State != PowerOn {
			allOn = false
		}
	}
	if allOn {
		return PowerOn
	}
	return PowerUnknown
}

// ShelfPowerState reads the PSUs and aggregates them.
func (c *Client) ShelfPowerState(ctx context.Context, style ShelfStyle) (PowerState, error) {
	psus, err := c.ShelfPSUs(ctx, style)
	if err != nil {
		return PowerUnknown, fmt.Errorf("get shelf power state: %w", err)
	}
	return AggregatePSUs(psus), nil
}

// SetShelfPower drives the shelf towards intent.
func (c *Client) SetShelfPower(ctx context.Context, style ShelfStyle, intent ShelfIntent) error {
	var err error
	switch style {
	case ShelfLiteOn:
		err = c.setLiteOnPower(ctx, intent)
	case ShelfDelta:
		err = c.setDeltaPower(ctx, intent)
	default:
		err = fmt.Errorf("power shelf style %s: %w", style, ErrActionUnavailable)
	}
	if err != nil {
		return fmt.Errorf("set shelf power: %w", err)
	}
	return nil
}

// actionInfo is the part of an ActionInfo resource RMS uses.
type actionInfo struct {
	Parameters []struct {
		Name            string          `json:"Name"`
		DefaultValue    json.RawMessage `json:"DefaultValue"`
		AllowableValues []string        `json:"AllowableValues"`
	} `json:"Parameters"`
}

func (c *Client) setLiteOnPower(ctx context.Context, intent ShelfIntent) error {
	chURI, err := c.shelfChassis(ctx, ShelfLiteOn)
	if err != nil {
		return err
	}
	var ch chassis
	if err := c.get(ctx, chURI, &ch); err != nil {
		return err
	}
	key, resetType := "", ResetType("")
	switch intent {
	case ShelfOn:
		key, resetType = "#Chassis.On", ResetOn
	case ShelfOff:
		key, resetType = "#Chassis.Off", ResetGracefulShutdown
	case ShelfForceOff:
		key, resetType = "#Chassis.ForceOff", ResetForceOff
	default:
		return fmt.Errorf("shelf intent %d: %w", intent, ErrActionUnavailable)
	}
	if act, ok := ch.Actions.find(key, false); ok {
		body := map[string]any{}
		if act.ActionInfo != "" {
			var info actionInfo
			if err := c.get(ctx, act.ActionInfo, &info); err != nil {
				return fmt.Errorf("read %s action info: %w", key, err)
			}
			for _, p := range info.Parameters {
				switch {
				case len(p.DefaultValue) > 0 && string(p.DefaultValue) != "null":
					body[p.Name] = p.DefaultValue
				case len(p.AllowableValues) > 0:
					body[p.Name] = p.AllowableValues[0]
				}
			}
		}
		if _, err := c.send(ctx, "POST", act.Target, body, nil); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	}
	act, ok := ch.Actions.find("#Chassis.Reset", false)
	if !ok {
		return fmt.Errorf("chassis %s advertises neither %s nor #Chassis.Reset: %w", chURI, key, ErrActionUnavailable)
	}
	allowed := act.ResetTypeAllowable
	if act.ActionInfo != "" {
		var info actionInfo
		if err := c.get(ctx, act.ActionInfo, &info); err != nil {
			return fmt.Errorf("read #Chassis.Reset action info: %w", err)
		}
		for _, p := range info.Parameters {
			if p.Name == "ResetType" && len(p.AllowableValues) > 0 {
				allowed = p.AllowableValues
			}
		}
	}
	if len(allowed) > 0 && !contains(allowed, string(resetType)) {
		return fmt.Errorf("#Chassis.Reset does not allow %s (%v): %w", resetType, allowed, ErrActionUnavailable)
	}
	if _, err := c.send(ctx, "POST", act.Target, map[string]string{"ResetType": string(resetType)}, nil); err != nil {
		return fmt.Errorf("#Chassis.Reset %s: %w", resetType, err)
	}
	return nil
}

func (c *Client) setDeltaPower(ctx context.Context, intent ShelfIntent) error {
	name := "#PowerShelf.TurnOnPSUs"
	switch intent {
	case ShelfOn:
	case ShelfOff, ShelfForceOff:
		name = "#PowerShelf.TurnOffPSUs"
	default:
		return fmt.Errorf("shelf intent %d: %w", intent, ErrActionUnavailable)
	}
	uris, err := c.members(ctx, "/redfish/v1/PowerEquipment/PowerShelves")
	if err != nil {
		return fmt.Errorf("list power shelves: %w", err)
	}
	var lastErr error
	for _, u := range uris {
		var ps struct {
			Name          string                     `json:"Name"`
			EquipmentType string                     `json:"EquipmentType"`
			Manufacturer  string                     `json:"Manufacturer"`
			Oem           map[string]json.RawMessage `json:"Oem"`
		}
		if err := c.get(ctx, u, &ps); err != nil {
			lastErr = err
			continue
		}
		kind := strings.ToLower(strings.ReplaceAll(ps.EquipmentType, " ", ""))
		if !hasDeltaMarker(ps.Manufacturer, ps.Oem) ||
			!(strings.Contains(kind, "powershelf") || strings.EqualFold(ps.Name, "power shelf")) {
			continue
		}
		var oem struct {
			Actions actions `json:"Actions"`
		}
		if raw, ok := ps.Oem["deltaenergysystems"]; !ok || json.Unmarshal(raw, &oem) != nil {
			continue
		}
		_, okOn := oem.Actions.find("#PowerShelf.TurnOnPSUs", false)
		_, okOff := oem.Actions.find("#PowerShelf.TurnOffPSUs", false)
		if !okOn || !okOff {
			continue
		}
		act, _ := oem.Actions.find(name, false)
		if _, err := c.send(ctx, "POST", act.Target, nil, nil); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if lastErr != nil && !errors.Is(lastErr, ErrNotFound) {
		return fmt.Errorf("no usable Delta power shelf: %w", lastErr)
	}
	return fmt.Errorf("no Delta power shelf with %s: %w", name, ErrActionUnavailable)
}
