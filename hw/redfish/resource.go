package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// link is a Redfish reference {"@odata.id": "..."}.
type link struct {
	ID string `json:"@odata.id"`
}

// collection is any Redfish resource collection.
type collection struct {
	Members []link `json:"Members"`
}

// action is one entry of a resource's Actions object.
type action struct {
	Target     string `json:"target"`
	ActionInfo string `json:"@Redfish.ActionInfo"`
	// Some services list allowable values inline instead of in ActionInfo.
	ResetTypeAllowable []string `json:"ResetType@Redfish.AllowableValues"`
}

// actions is a resource's Actions object; Oem actions sit under "Oem".
type actions map[string]json.RawMessage

// find returns the named action (e.g. "#ComputerSystem.Reset"), looking in
// Oem too when oem is set.
func (a actions) find(name string, oem bool) (action, bool) {
	src := map[string]json.RawMessage(a)
	if oem {
		var o map[string]json.RawMessage
		if raw, ok := a["Oem"]; !ok || json.Unmarshal(raw, &o) != nil {
			return action{}, false
		}
		src = o
	}
	raw, ok := src[name]
	if !ok {
		return action{}, false
	}
	var act action
	if json.Unmarshal(raw, &act) != nil || act.Target == "" {
		return action{}, false
	}
	return act, true
}

// members lists the member URIs of the collection at path.
func (c *Client) members(ctx context.Context, p string) ([]string, error) {
	var col collection
	if err := c.get(ctx, p, &col); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(col.Members))
	for _, m := range col.Members {
		if m.ID != "" {
			out = append(out, m.ID)
		}
	}
	return out, nil
}

// lastSegment returns the last path segment of a URI.
func lastSegment(uri string) string { return path.Base(strings.TrimRight(uri, "/")) }

// ServiceRoot is the part of GET /redfish/v1 RMS uses.
type ServiceRoot struct {
	ID             string `json:"Id"`
	RedfishVersion string `json:"RedfishVersion"`
	Systems        link   `json:"Systems"`
	Managers       link   `json:"Managers"`
	Chassis        link   `json:"Chassis"`
	UpdateService  link   `json:"UpdateService"`
	TaskService    link   `json:"TaskService"`
}

// ServiceRoot reads GET /redfish/v1. It is also the liveness probe.
func (c *Client) ServiceRoot(ctx context.Context) (ServiceRoot, error) {
	var root ServiceRoot
	if err := c.get(ctx, "/redfish/v1", &root); err != nil {
		return ServiceRoot{}, fmt.Errorf("read service root: %w", err)
	}
	return root, nil
}

// collectionPath returns the advertised collection link, or fallback.
func collectionPath(l link, fallback string) string {
	if l.ID != "" {
		return l.ID
	}
	return fallback
}
