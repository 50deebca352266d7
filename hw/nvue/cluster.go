package nvue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// The scale-up fabric's cluster resources (southbound §3.12): the cluster
// state, its apps' lifecycle actions and managers, and the node-IP settings
// staged in revisions.

// Cluster is GET /nvue_v1/cluster: the state ("enabled", "disabled",
// "start") and the NMX-C connection ("up", "down", "n/a").
type Cluster struct {
	State    string
	NMXCConn string
	// Doc is the document the switch answered, compacted (upstream's
	// get_cluster_state passes it through).
	Doc string
}

// stateOf reads a string, or the "state" of an object.
func stateOf(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		s, _ := t["state"].(string)
		return s
	}
	return ""
}

// Cluster reads the cluster state.
func (c *Client) Cluster(ctx context.Context) (Cluster, error) {
	var raw json.RawMessage
	if err := c.getJSON(ctx, "/nvue_v1/cluster", &raw); err != nil {
		return Cluster{}, fmt.Errorf("read cluster: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return Cluster{}, fmt.Errorf("read cluster: %w: not a JSON object", ErrInvalidResponse)
	}
	out := Cluster{State: stateOf(m["state"]), NMXCConn: stateOf(m["nmxc-conn"]), Doc: compactDoc(raw)}
	if out.State == "" {
		return out, fmt.Errorf("read cluster: %w: no state", ErrInvalidResponse)
	}
	return out, nil
}

func appPath(app string) string { return "/nvue_v1/cluster/apps/" + url.PathEscape(app) }

// ClusterAppManager reads GET /nvue_v1/cluster/apps/<app>/manager and
// returns its state (enabled, disabled, start, active).
func (c *Client) ClusterAppManager(ctx context.Context, app string) (string, error) {
	var m map[string]any
	if err := c.getJSON(ctx, appPath(app)+"/manager", &m); err != nil {
		return "", fmt.Errorf("read manager of cluster app %s: %w", app, err)
	}
	return stateOf(m["state"]), nil
}

// ClusterAppAction starts @verb (stop or start) on a cluster app and
// returns the action id.
func (c *Client) ClusterAppAction(ctx context.Context, app, verb string) (string, error) {
	return c.postAction(ctx, appPath(app), verb, nil)
}

// ClusterAppManagerLeaf reads GET /nvue_v1/cluster/apps/<app>/manager/<leaf>
// (certificate, ca-certificate, encryption).
func (c *Client) ClusterAppManagerLeaf(ctx context.Context, app, leaf string) (map[string]any, error) {
	var m map[string]any
	if err := c.getJSON(ctx, appPath(app)+"/manager/"+url.PathEscape(leaf), &m); err != nil {
		return nil, fmt.Errorf("read manager %s of cluster app %s: %w", leaf, app, err)
	}
	return m, nil
}

// UpdateClusterAppManager starts @update with params on
// /nvue_v1/cluster/apps/<app>/manager/<leaf> and returns the action id.
func (c *Client) UpdateClusterAppManager(ctx context.Context, app, leaf string, params map[string]any) (string, error) {
	return c.postAction(ctx, appPath(app)+"/manager/"+url.PathEscape(leaf), "update", params)
}

// Cluster node interfaces whose server addresses the fabric serves on.
const (
	NodePrimary   = "primary"
	NodeSecondary = "secondary"
)

func nodePath(iface string) string { return "/nvue_v1/cluster/node/" + url.PathEscape(iface) }

// ClusterNodeServers reads the addresses of a cluster node interface in
// revision rev ("applied" for the running configuration), sorted; an
// interface that is not configured (404) has none.
func (c *Client) ClusterNodeServers(ctx context.Context, iface, rev string) ([]string, error) {
	var m map[string]any
	err := c.getJSON(ctx, nodePath(iface)+"/server?rev="+url.QueryEscape(rev), &m)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster node %s servers: %w", iface, err)
	}
	out := make([]string, 0, len(m))
	for ip := range m {
		out = append(out, ip)
	}
	slices.Sort(out)
	return out, nil
}

// ClearClusterNode stages the removal of a cluster node interface's
// settings in revision rev.
func (c *Client) ClearClusterNode(ctx context.Context, rev, iface string) error {
	_, err := c.do(ctx, http.MethodDelete, nodePath(iface)+"?rev="+url.QueryEscape(rev), nil, nil)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("stage clearing cluster node %s in revision %s: %w", iface, rev, err)
	}
	return nil
}

// StageClusterNodeServer stages ip as the address of a cluster node
// interface in revision rev.
func (c *Client) StageClusterNodeServer(ctx context.Context, rev, iface, ip string) error {
	return c.Patch(ctx, rev, nodePath(iface)+"/server", map[string]any{ip: map[string]any{}})
}
