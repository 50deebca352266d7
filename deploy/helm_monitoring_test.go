package deploy

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestHelmMonitoringOffByDefault(t *testing.T) {
	for key := range renderChart(t) {
		if strings.HasPrefix(key, "ServiceMonitor") || strings.HasPrefix(key, "PrometheusRule") {
			t.Errorf("the default render has %s", key)
		}
	}
}

// TestHelmMonitoringRender checks that the ServiceMonitor selects the
// chart's Service and scrapes its metrics port, and that every alert of
// the PrometheusRule asks for metric families rmsd exports, of the job the
// ServiceMonitor scrapes.
func TestHelmMonitoringRender(t *testing.T) {
	objects := renderChart(t, "-f", "helm/rmsd/ci/monitoring-values.yaml")
	svc, sm, rule := objects["Service"], objects["ServiceMonitor"], objects["PrometheusRule"]
	if sm == nil || rule == nil {
		t.Fatalf("rendered %v: want a ServiceMonitor and a PrometheusRule", keys(objects))
	}
	labels, _ := svc.get("metadata", "labels").(map[string]any)
	for k, v := range sm.get("spec", "selector", "matchLabels").(map[string]any) {
		if labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v; the Service has %v", k, v, labels[k])
		}
	}
	if sm.str("metadata", "labels", "release") != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels %v lack the values' labels", sm.get("metadata", "labels"))
	}
	ep := sm.get("spec", "endpoints").([]any)[0].(map[string]any)
	if svc.get("spec", "ports", ep["port"].(string)) == nil {
		t.Errorf("the ServiceMonitor scrapes port %v, which the Service does not name", ep["port"])
	}

	families := registryFamilies(t)
	job := `job="` + svc.str("metadata", "name") + `"`
	alerts := map[string]string{}
	for _, g := range rule.get("spec", "groups").([]any) {
		for _, r := range object(g.(map[string]any)).get("rules").([]any) {
			r := object(r.(map[string]any))
			expr := r.str("expr")
			alerts[r.str("alert")] = expr
			if !strings.Contains(expr, job) {
				t.Errorf("%s: %s does not select %s", r.str("alert"), expr, job)
			}
			names, err := promqlMetricNames(expr)
			if err != nil || len(names) == 0 {
				t.Errorf("%s: %s: metric names %v, %v", r.str("alert"), expr, names, err)
			}
			for _, name := range names {
				if why := unknownMetric(families, name); why != "" {
					t.Errorf("%s: %s", r.str("alert"), why)
				}
			}
			if r.str("labels", "severity") != "critical" {
				t.Errorf("%s: severity %q, want the values' critical", r.str("alert"), r.str("labels", "severity"))
			}
		}
	}
	for _, want := range []string{"RmsdDown", "RmsdStoreUnavailable", "RmsdJobsFailing", "RmsdNodesHeldWithoutJob",
		"RmsdJobQuarantined", "RmsdDrainTakingLong", "RmsdCertificateExpiring"} {
		if _, ok := alerts[want]; !ok {
			t.Errorf("no alert %s among %v", want, keysOf(alerts))
		}
	}
	// The thresholds are the values'.
	if !strings.Contains(alerts["RmsdDrainTakingLong"], "> 1200") || !strings.Contains(alerts["RmsdCertificateExpiring"], "< 14 * 86400") {
		t.Errorf("default thresholds not in %q, %q", alerts["RmsdDrainTakingLong"], alerts["RmsdCertificateExpiring"])
	}
	custom := renderChart(t, "-f", "helm/rmsd/ci/monitoring-values.yaml",
		"--set", "monitoring.prometheusRule.drainLongSeconds=3600", "--set", "monitoring.prometheusRule.certificateExpiryDays=30")
	for _, r := range custom["PrometheusRule"].get("spec", "groups").([]any)[0].(map[string]any)["rules"].([]any) {
		r := object(r.(map[string]any))
		switch expr := r.str("expr"); r.str("alert") {
		case "RmsdDrainTakingLong":
			if !strings.Contains(expr, "> 3600") {
				t.Errorf("drainLongSeconds=3600 gave %s", expr)
			}
		case "RmsdCertificateExpiring":
			if !strings.Contains(expr, "< 30 * 86400") {
				t.Errorf("certificateExpiryDays=30 gave %s", expr)
			}
		}
	}
}

// TestHelmDashboardQueriesUseExportedFamilies renders the Grafana
// dashboard's ConfigMap: it carries the sidecar's label in the configured
// namespace, its JSON is a dashboard with the panels the issue names, and
// every query (panels and template variables) selects only families
// rmsd's registry exports.
func TestHelmDashboardQueriesUseExportedFamilies(t *testing.T) {
	if _, ok := renderChart(t)["ConfigMap-dashboard"]; ok {
		t.Error("the default render has the dashboard's ConfigMap")
	}
	cm := renderChart(t, "-f", "helm/rmsd/ci/monitoring-values.yaml")["ConfigMap-dashboard"]
	if cm == nil {
		t.Fatal("no dashboard ConfigMap with monitoring.grafanaDashboard.enabled")
	}
	if cm.str("metadata", "labels", "grafana_dashboard") != "1" || cm.str("metadata", "namespace") != "monitoring" ||
		cm.str("metadata", "annotations", "grafana_folder") != "RMS" {
		t.Errorf("dashboard ConfigMap metadata %v", cm.get("metadata"))
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	raw := cm.str("data", "rmsd.json")
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(&dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("dashboard %q (uid %q) with %d panels", dash.Title, dash.UID, len(dash.Panels))
	}
	families := registryFamilies(t)
	check := func(where, expr string) []string {
		names, err := promqlMetricNames(expr)
		if err != nil || len(names) == 0 {
			t.Errorf("%s: %s: metric names %v, %v", where, expr, names, err)
		}
		for _, name := range names {
			if why := unknownMetric(families, name); why != "" {
				t.Errorf("%s: %s", where, why)
			}
		}
		return names
	}
	used := map[string]bool{}
	titles := map[string]bool{}
	for _, p := range dash.Panels {
		titles[p.Title] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if !strings.Contains(tg.Expr, `job=~"$job"`) {
				t.Errorf("panel %q: %s does not select the $job variable", p.Title, tg.Expr)
			}
			for _, n := range check("panel "+p.Title, tg.Expr) {
				used[n] = true
			}
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((?:(.+),)?\s*[a-zA-Z_]\w*\s*\)$`)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		query, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(query)
		if m == nil || m[1] == "" {
			t.Errorf("variable %s: query %q, want label_values(<metric>, <label>)", v.Name, query)
			continue
		}
		check("variable "+v.Name, m[1])
	}
	for _, want := range []string{"rms_grpc_server_handling_seconds_count", "rms_grpc_server_handling_seconds_bucket",
		"rms_workflows_counts_total", "rms_workflows_in_flight", "rmsd_journal_commit_seconds_bucket",
		"rmsd_registry_mailbox_depth", "rmsd_hardware_request_seconds_bucket", "rmsd_hardware_request_errors_total",
		"rmsd_nodes_held", "rmsd_jobs_quarantined"} {
		if !used[want] {
			t.Errorf("no panel queries %s", want)
		}
	}
	for _, want := range []string{"RPC rate by method", "RPC latency by method (p50, p99)", "RPC errors by method",
		"Jobs by type and state", "In-flight workflows by type", "Journal commit latency (p50, p99)", "Registry mailbox",
		"Hardware request latency by device kind (p50, p99)", "Hardware request errors by device kind", "Held nodes", "Quarantined jobs"} {
		if !titles[want] {
			t.Errorf("no panel %q", want)
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func keys(m map[string]object) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
