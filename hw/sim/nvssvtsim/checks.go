package nvssvtsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rmsd/rmsd/hw/nvssvt"
)

// The checks, in the order they run.
const (
	checkServiceRoot = "redfish_service_root"
	checkSystems     = "systems"
	checkPowerState  = "power_state"
	checkChassis     = "chassis"
	checkFirmware    = "firmware_inventory"
	// firmwareMembers is how many inventory members are read.
	firmwareMembers = 8
)

// run runs every check against the BMC.
func run(ctx context.Context, c *client, skip map[string]bool) []nvssvt.Check {
	var out []nvssvt.Check
	add := func(name string, fn func() (string, string)) {
		if skip[name] {
			out = append(out, nvssvt.Check{Name: name, Status: nvssvt.StatusSkip, Message: "skipped by the configuration override"})
			return
		}
		status, msg := fn()
		out = append(out, nvssvt.Check{Name: name, Status: status, Message: msg})
	}
	var root resource
	add(checkServiceRoot, func() (string, string) {
		if err := c.get(ctx, "/redfish/v1", &root); err != nil {
			return nvssvt.StatusFail, err.Error()
		}
		if root.RedfishVersion == "" {
			return nvssvt.StatusFail, "the service root has no RedfishVersion"
		}
		return nvssvt.StatusPass, "Redfish " + root.RedfishVersion
	})
	if root.RedfishVersion == "" {
		for _, name := range []string{checkSystems, checkPowerState, checkChassis, checkFirmware} {
			out = append(out, nvssvt.Check{Name: name, Status: nvssvt.StatusSkip, Message: "the Redfish service root is not available"})
		}
		return out
	}
	var system string
	add(checkSystems, func() (string, string) {
		if root.Systems.ID == "" {
			return nvssvt.StatusSkip, "the BMC has no Systems"
		}
		var coll resource
		if err := c.get(ctx, root.Systems.ID, &coll); err != nil {
			return nvssvt.StatusFail, err.Error()
		}
		if len(coll.Members) == 0 {
			return nvssvt.StatusFail, "the Systems collection is empty"
		}
		system = coll.Members[0].ID
		return nvssvt.StatusPass, fmt.Sprintf("%d system(s)", len(coll.Members))
	})
	add(checkPowerState, func() (string, string) {
		if system == "" {
			return nvssvt.StatusSkip, "no system to read"
		}
		var sys resource
		if err := c.get(ctx, system, &sys); err != nil {
			return nvssvt.StatusFail, err.Error()
		}
		if sys.PowerState != "On" {
			return nvssvt.StatusFail, fmt.Sprintf("PowerState is %q, want On", sys.PowerState)
		}
		return nvssvt.StatusPass, "PowerState On"
	})
	add(checkChassis, func() (string, string) {
		if root.Chassis.ID == "" {
			return nvssvt.StatusFail, "the service root has no Chassis"
		}
		var coll resource
		if err := c.get(ctx, root.Chassis.ID, &coll); err != nil {
			return nvssvt.StatusFail, err.Error()
		}
		if len(coll.Members) == 0 {
			return nvssvt.StatusFail, "the Chassis collection is empty"
		}
		var ch resource
		if err := c.get(ctx, coll.Members[0].ID, &ch); err != nil {
			return nvssvt.StatusFail, err.Error()
		}
		if h := ch.Status.Health; h != "" && h != "OK" {
			return nvssvt.StatusFail, fmt.Sprintf("chassis %s health is %s", ch.ID, h)
		}
		return nvssvt.StatusPass, fmt.Sprintf("%d chassis", len(coll.Members))
	})
	add(checkFirmware, func() (string, string) {
		var coll resource
		if err := c.get(ctx, "/redfish/v1/UpdateService/FirmwareInventory", &coll); err != nil {
			return nvssvt.StatusFail, err.Error()
		}
		if len(coll.Members) == 0 {
			return nvssvt.StatusFail, "the firmware inventory is empty"
		}
		var missing []string
		for i, m := range coll.Members {
			if i == firmwareMembers {
				break
			}
			var item resource
			if err := c.get(ctx, m.ID, &item); err != nil {
				return nvssvt.StatusFail, err.Error()
			}
			if item.Version == "" {
				missing = append(missing, item.ID)
			}
		}
		if len(missing) > 0 {
			return nvssvt.StatusFail, "no Version on " + strings.Join(missing, ", ")
		}
		return nvssvt.StatusPass, fmt.Sprintf("%d firmware component(s)", len(coll.Members))
	})
	return out
}

// resource is what the checks read of any Redfish resource.
type resource struct {
	ID             string `json:"Id"`
	RedfishVersion string
	Systems        link
	Chassis        link
	Members        []link
	PowerState     string
	Version        string
	Status         struct{ Health string }
}

type link struct {
	ID string `json:"@odata.id"`
}

// client reads the BMC.
type client struct {
	base, user, pass string
	http             *http.Client
}

// get reads path into v.
func (c *client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	req.SetBasicAuth(c.user, c.pass)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	return nil
}
