package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// PowerState is a normalised power state.
type PowerState string

// The power states RMS reports.
const (
	PowerOn      PowerState = "On"
	PowerOff     PowerState = "Off"
	PowerUnknown PowerState = "Unknown"
)

// ResetType is a Redfish ResetType value.
type ResetType string

// ResetType values used by RMS.
const (
	ResetOn               ResetType = "On"
	ResetForceOn          ResetType = "ForceOn"
	ResetForceOff         ResetType = "ForceOff"
	ResetGracefulShutdown ResetType = "GracefulShutdown"
	ResetGracefulRestart  ResetType = "GracefulRestart"
	ResetForceRestart     ResetType = "ForceRestart"
	ResetPowerCycle       ResetType = "PowerCycle"
	ResetNmi              ResetType = "Nmi"
	ResetAuxPowerCycle    ResetType = "AuxPowerCycle"
)

// DefaultSystemID is the system every NVIDIA tray BMC exposes.
const DefaultSystemID = "System_0"

// parsePowerState maps a Redfish PowerState (or a PSU's bool/"true"/"false")
// to On/Off/Unknown. Every power read of every node goes through it, so a
// plain quoted word (no escapes) is read in place, without the decoder.
func parsePowerState(raw json.RawMessage) PowerState {
	if w, ok := plainString(raw); ok {
		return powerWord(w)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return powerWord([]byte(s))
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return PowerOn
		}
		return PowerOff
	}
	return PowerUnknown
}

// powerWord maps the words of a power state, in any case and padding.
func powerWord(w []byte) PowerState {
	w = bytes.TrimSpace(w)
	switch {
	case bytes.EqualFold(w, []byte("on")), bytes.EqualFold(w, []byte("true")):
		return PowerOn
	case bytes.EqualFold(w, []byte("off")), bytes.EqualFold(w, []byte("false")):
		return PowerOff
	}
	return PowerUnknown
}

// plainString returns the text of a JSON string that holds no escape
// sequence, as it stands between its quotes; ok is false for anything
// else (another JSON value, or a string the decoder must unescape).
func plainString(raw []byte) (text []byte, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	text = raw[1 : len(raw)-1]
	for _, c := range text {
		if c == '\\' || c == '"' || c < 0x20 { // an escape, or not one string
			return nil, false
		}
	}
	return text, true
}

// system is the part of a ComputerSystem RMS uses.
type system struct {
	ID         string          `json:"Id"`
	ODataID    string          `json:"@odata.id"`
	PowerState json.RawMessage `json:"PowerState"`
	Processors link            `json:"Processors"`
	Actions    actions         `json:"Actions"`
}

// findSystem reads /redfish/v1/Systems/<id> directly; when that is missing
// or names another system it walks the Systems collection.
func (c *Client) findSystem(ctx context.Context, id string) (system, string, error) {
	direct := "/redfish/v1/Systems/" + id
	var s system
	err := c.get(ctx, direct, &s)
	if err == nil && (s.ID == id || lastSegment(s.ODataID) == id) {
		return s, direct, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return system{}, "", fmt.Errorf("read system %s: %w", id, err)
	}
	uris, err := c.members(ctx, "/redfish/v1/Systems")
	if err != nil {
		return system{}, "", fmt.Errorf("list systems: %w", err)
	}
	for _, u := range uris {
		if lastSegment(u) != id {
			continue
		}
		if err := c.get(ctx, u, &s); err != nil {
			return system{}, "", fmt.Errorf("read system %s: %w", u, err)
		}
		return s, u, nil
	}
	return system{}, "", fmt.Errorf("system %s: %w", id, ErrNotFound)
}

// SystemPowerState reads System_0's PowerState. Transitional states
// (PoweringOn, PoweringOff, Paused, missing) are PowerUnknown.
func (c *Client) SystemPowerState(ctx context.Context) (PowerState, error) {
	// Fast path (the one fleet-wide polls take): decode only what is read.
	var quick struct {
		ID         string          `json:"Id"`
		ODataID    string          `json:"@odata.id"`
		PowerState json.RawMessage `json:"PowerState"`
	}
	err := c.get(ctx, "/redfish/v1/Systems/"+DefaultSystemID, &quick)
	if err == nil && (quick.ID == DefaultSystemID || lastSegment(quick.ODataID) == DefaultSystemID) {
		return parsePowerState(quick.PowerState), nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return PowerUnknown, fmt.Errorf("get power state: read system %s: %w", DefaultSystemID, err)
	}
	s, _, err := c.findSystem(ctx, DefaultSystemID)
	if err != nil {
		return PowerUnknown, fmt.Errorf("get power state: %w", err)
	}
	return parsePowerState(s.PowerState), nil
}

// ResetSystem posts {"ResetType": rt} to System_0's advertised
// #ComputerSystem.Reset target. Any 2xx is success.
func (c *Client) ResetSystem(ctx context.Context, rt ResetType) error {
	s, _, err := c.findSystem(ctx, DefaultSystemID)
	if err != nil {
		return fmt.Errorf("reset system %s: %w", rt, err)
	}
	act, ok := s.Actions.find("#ComputerSystem.Reset", false)
	if !ok {
		return fmt.Errorf("reset system %s: #ComputerSystem.Reset not advertised: %w", rt, ErrActionUnavailable)
	}
	if len(act.ResetTypeAllowable) > 0 && !contains(act.ResetTypeAllowable, string(rt)) {
		return fmt.Errorf("reset system: ResetType %s not allowed (%v): %w", rt, act.ResetTypeAllowable, ErrActionUnavailable)
	}
	if _, err := c.send(ctx, "POST", act.Target, map[string]string{"ResetType": string(rt)}, nil); err != nil {
		return fmt.Errorf("reset system %s: %w", rt, err)
	}
	return nil
}

// manager is the part of a Manager RMS uses.
type manager struct {
	ID      string  `json:"Id"`
	ODataID string  `json:"@odata.id"`
	Actions actions `json:"Actions"`
}

// ResetManager posts {"ResetType": rt} to the #Manager.Reset target of the
// manager with the given id (e.g. "BMC_0", "HGX_BMC_0"). An empty id picks
// the first manager advertising the action (the power-shelf PMC).
func (c *Client) ResetManager(ctx context.Context, id string, rt ResetType) error {
	var uris []string
	if id != "" {
		uris = []string{"/redfish/v1/Managers/" + id}
	} else {
		var err error
		if uris, err = c.members(ctx, "/redfish/v1/Managers"); err != nil {
			return fmt.Errorf("reset manager: list managers: %w", err)
		}
	}
	for _, u := range uris {
		var m manager
		if err := c.get(ctx, u, &m); err != nil {
			if id != "" {
				return fmt.Errorf("reset manager %s: %w", id, err)
			}
			continue
		}
		act, ok := m.Actions.find("#Manager.Reset", false)
		if !ok {
			continue
		}
		if _, err := c.send(ctx, "POST", act.Target, map[string]string{"ResetType": string(rt)}, nil); err != nil {
			return fmt.Errorf("reset manager %s %s: %w", lastSegment(u), rt, err)
		}
		return nil
	}
	return fmt.Errorf("reset manager %q: #Manager.Reset not advertised: %w", id, ErrActionUnavailable)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
