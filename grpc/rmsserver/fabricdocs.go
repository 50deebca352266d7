package rmsserver

import (
	"encoding/json"
	"fmt"

	"github.com/rmsd/rmsd/hw/fabric"
)

// The JSON documents of the v1 fabric RPCs keep upstream's shape: where
// upstream passes the switch's NVUE document through (its
// get_cluster_apps_status, get_cluster_state), rmsd passes the same
// document through, and adds its own keys only beside the switch's, never
// in place of one.

// maxDeviceDoc bounds a switch document a reply passes through. NVUE's
// cluster and app documents are a few hundred bytes; a larger one keeps
// only the keys callers read (see deviceDoc).
const maxDeviceDoc = 16 << 10

// deviceDoc is the switch's JSON object doc with ours added beside its
// keys: a key the switch already has keeps the switch's value. A document
// over maxDeviceDoc keeps only the keys named in keep whose values are
// strings, each clipped to maxEchoed, so the reply stays bounded and still
// parses as the same shape. A doc that is not a JSON object counts as {}.
func deviceDoc(doc string, keep []string, ours map[string]any) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(doc), &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	if len(doc) > maxDeviceDoc {
		small := map[string]json.RawMessage{}
		for _, k := range keep {
			var s string
			if json.Unmarshal(m[k], &s) == nil {
				small[k], _ = json.Marshal(clip(s, maxEchoed))
			}
		}
		m = small
	}
	for k, v := range ours {
		if _, taken := m[k]; taken {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			b, _ = json.Marshal(fmt.Sprint(v))
		}
		m[k] = b
	}
	b, _ := json.Marshal(m) // raw values that parsed once marshal again
	return string(b)
}

// appDocKeys are the keys of an NVUE cluster app document callers read
// (NICo: status, addition-info, reason).
var appDocKeys = []string{"status", "addition-info", "additional-info", "reason"}

// serviceStatusDoc is one switch's status_json in
// BatchGetScaleUpFabricServiceStatus, as upstream's
// handle_batch_get_scale_up_fabric_service_status answers it: the switch's
// nmx-controller app document as NVUE answered it, with upstream's keys
// beside it (its get_cluster_apps_status: installed, health_status green
// for status ok and red otherwise, status_description) and rmsd's (node_id,
// the cluster's state and NMX-C connection). A switch whose cluster is
// disabled has no app (NVUE 404): as upstream, installed false,
// health_status unknown, "App nmx-controller is not installed".
func serviceStatusDoc(nodeID string, cl fabric.ClusterState, app fabric.AppStatus) string {
	ours := map[string]any{
		"node_id": nodeID, "installed": app.Installed,
		"cluster_state": clip(cl.State, maxEchoed), "nmxc_conn": clip(cl.NMXCConn, maxEchoed),
	}
	switch {
	case !app.Installed:
		ours["health_status"] = "unknown"
		ours["status_description"] = "App " + fabric.AppController + " is not installed"
	case app.Status == "ok":
		ours["health_status"] = "green"
		ours["status_description"] = fabric.AppController + " is running and healthy"
	default:
		ours["health_status"] = "red"
		ours["status_description"] = fabric.AppController + " status: " + clip(app.Status, maxEchoed)
	}
	return deviceDoc(app.Doc, appDocKeys, ours)
}

// clusterStateDoc is GetScaleUpFabricState's state_json: the switch's
// /nvue_v1/cluster document with, beside it, node_id, enabled, and
// upstream's cluster_healthy and warning (its get_cluster_state adds them:
// unhealthy when the cluster is disabled or NMX-C is down).
func clusterStateDoc(nodeID string, cl fabric.ClusterState) string {
	ours := map[string]any{"node_id": nodeID, "enabled": cl.Enabled()}
	switch {
	case cl.State == "disabled" || cl.State == "":
		ours["cluster_healthy"] = false
		ours["warning"] = "Cluster is disabled"
		ours["recommendation"] = "Enable the scale-up fabric (BatchSetScaleUpFabricState) before cluster operations"
	case cl.NMXCConn == "down" || cl.NMXCConn == "disabled":
		ours["cluster_healthy"] = false
		ours["warning"] = "nmxc-conn is down"
	default:
		ours["cluster_healthy"] = true
	}
	return deviceDoc(cl.Doc, []string{"state", "nmxc-conn"}, ours)
}
