package nvue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// SDNFactoryReset starts @reset (force) on /nvue_v1/sdn/factory-default,
// the scale-up fabric's own factory default, and returns the action id. Only
// a switch whose cluster is enabled (the fabric's primary) carries it out.
func (c *Client) SDNFactoryReset(ctx context.Context) (string, error) {
	return c.postAction(ctx, "/nvue_v1/sdn/factory-default", "reset", map[string]any{"force": true})
}

// ClusterApp is GET /nvue_v1/cluster/apps/<app>: the app's status ("ok",
// "not ok", "stopped"), why, and its control-plane state
// (CONTROL_PLANE_STATE_CONFIGURED, _UNCONFIGURED, _STOPPED).
type ClusterApp struct {
	Status       string
	Reason       string
	ControlPlane string
	// Manager is the state of the app's external gRPC access (manager.state:
	// enabled, disabled, start, active), empty when not reported.
	Manager string
	// Doc is the document the switch answered, compacted: what upstream's
	// get_cluster_apps_status passes through to its callers.
	Doc string
}

// compactDoc is raw compacted, or raw itself when it is not JSON.
func compactDoc(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// ClusterApp reads a cluster app; an app that is not installed is
// ErrNotFound.
func (c *Client) ClusterApp(ctx context.Context, app string) (ClusterApp, error) {
	var raw json.RawMessage
	if err := c.getJSON(ctx, "/nvue_v1/cluster/apps/"+url.PathEscape(app), &raw); err != nil {
		return ClusterApp{}, fmt.Errorf("read cluster app %s: %w", app, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return ClusterApp{}, fmt.Errorf("read cluster app %s: %w: not a JSON object", app, ErrInvalidResponse)
	}
	a := ClusterApp{Doc: compactDoc(raw)}
	a.Status, _ = m["status"].(string)
	a.Reason, _ = m["reason"].(string)
	for _, k := range []string{"addition-info", "additional-info"} {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			a.ControlPlane = strings.TrimSpace(s)
			break
		}
	}
	a.Manager = stateOf(m["manager"])
	return a, nil
}
