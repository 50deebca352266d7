package redfish

import (
	"context"
	"fmt"
	"strings"
)

// CheckUpdatePreconditions is the compute-tray check upstream runs before a
// firmware upload: hardware write protection off, no inventory member
// write-protected, every chassis' background copy completed, and no
// firmware task still running. A failed check wraps ErrPrecondition; the
// caller decides whether to wait and retry.
func (c *Client) CheckUpdatePreconditions(ctx context.Context) error {
	chassisURIs, err := c.members(ctx, "/redfish/v1/Chassis")
	if err != nil {
		return fmt.Errorf("update preconditions: list chassis: %w", err)
	}
	for _, u := range chassisURIs {
		var ch struct {
			Oem struct {
				Nvidia struct {
					WriteProtect   *bool  `json:"HardwareWriteProtectEnable"`
					BackgroundCopy string `json:"BackgroundCopyStatus"`
				} `json:"Nvidia"`
			} `json:"Oem"`
		}
		if err := c.get(ctx, u, &ch); err != nil {
			return fmt.Errorf("update preconditions: %w", err)
		}
		nv := ch.Oem.Nvidia
		if nv.WriteProtect != nil && *nv.WriteProtect {
			return fmt.Errorf("update preconditions: %s has hardware write protection enabled: %w", u, ErrPrecondition)
		}
		if nv.BackgroundCopy != "" && !strings.EqualFold(nv.BackgroundCopy, "Completed") {
			return fmt.Errorf("update preconditions: %s background copy is %s: %w", u, nv.BackgroundCopy, ErrPrecondition)
		}
	}
	inv, err := c.FirmwareInventory(ctx)
	if err != nil {
		return fmt.Errorf("update preconditions: %w", err)
	}
	for _, comp := range inv.Components {
		if comp.WriteProtected {
			return fmt.Errorf("update preconditions: %s is write-protected: %w", comp.URI, ErrPrecondition)
		}
	}
	taskURIs, err := c.members(ctx, TasksPath)
	if err != nil {
		return fmt.Errorf("update preconditions: list tasks: %w", err)
	}
	for _, u := range taskURIs {
		t, err := c.Task(ctx, lastSegment(u))
		if err != nil {
			return fmt.Errorf("update preconditions: %w", err)
		}
		if t.State == TaskPending || t.State == TaskRunning {
			return fmt.Errorf("update preconditions: firmware task %s is still %s: %w", t.ID, t.State, ErrPrecondition)
		}
	}
	return nil
}
