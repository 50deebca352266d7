package redfish

import (
	"context"
	"fmt"
)

// FirmwareInventoryPath is the firmware inventory collection.
const FirmwareInventoryPath = "/redfish/v1/UpdateService/FirmwareInventory"

// FirmwareComponent is one member of the firmware inventory.
type FirmwareComponent struct {
	URI            string // member URI, the inventory key
	ID             string // Id, else Name, else the URI's last segment
	Name           string
	Version        string
	SoftwareID     string
	Updateable     bool
	WriteProtected bool
	Health         string
}

// Inventory is the result of a firmware inventory walk.
type Inventory struct {
	Components []FirmwareComponent
	// Failed counts members whose GET failed (tolerated, as upstream does).
	Failed int
}

// FirmwareInventory walks the firmware inventory collection and reads each
// member. Failing members are counted, not fatal; an empty collection, or
// one where every member failed, is an error.
func (c *Client) FirmwareInventory(ctx context.Context) (Inventory, error) {
	uris, err := c.members(ctx, FirmwareInventoryPath)
	if err != nil {
		return Inventory{}, fmt.Errorf("firmware inventory: %w", err)
	}
	if len(uris) == 0 {
		return Inventory{}, fmt.Errorf("firmware inventory: no members: %w", ErrInvalidResponse)
	}
	inv := Inventory{Components: make([]FirmwareComponent, 0, len(uris))}
	var lastErr error
	for _, u := range uris {
		var m struct {
			ID             string `json:"Id"`
			Name           string `json:"Name"`
			Version        string `json:"Version"`
			SoftwareID     string `json:"SoftwareId"`
			Updateable     bool   `json:"Updateable"`
			WriteProtected bool   `json:"WriteProtected"`
			Status         struct {
				Health string `json:"Health"`
			} `json:"Status"`
		}
		if err := c.get(ctx, u, &m); err != nil {
			if ctx.Err() != nil {
				return Inventory{}, fmt.Errorf("firmware inventory: %w", err)
			}
			inv.Failed++
			lastErr = err
			continue
		}
		id := m.ID
		if id == "" {
			id = m.Name
		}
		if id == "" {
			id = lastSegment(u)
		}
		inv.Components = append(inv.Components, FirmwareComponent{
			URI: u, ID: id, Name: m.Name, Version: m.Version, SoftwareID: m.SoftwareID,
			Updateable: m.Updateable, WriteProtected: m.WriteProtected, Health: m.Status.Health,
		})
	}
	if len(inv.Components) == 0 {
		return Inventory{}, fmt.Errorf("firmware inventory: all %d members failed: %w", inv.Failed, lastErr)
	}
	return inv, nil
}
