package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exportedFamilies returns the metric family names rmsd registers, read
// from its metrics package.
func exportedFamilies(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("../cmd/internal/metrics/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("rmsd's metrics sources: %v", err)
	}
	names := map[string]bool{}
	family := regexp.MustCompile(`"(rmsd?_[a-z_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range family.FindAllStringSubmatch(string(src), -1) {
			names[m[1]] = true
		}
	}
	return names
}

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

	families := exportedFamilies(t)
	metric := regexp.MustCompile(`\b(rmsd?_[a-z_]+)`)
	job := `job="` + svc.str("metadata", "name") + `"`
	alerts := map[string]bool{}
	for _, g := range rule.get("spec", "groups").([]any) {
		for _, r := range object(g.(map[string]any)).get("rules").([]any) {
			r := object(r.(map[string]any))
			alerts[r.str("alert")] = true
			expr := r.str("expr")
			if !strings.Contains(expr, job) {
				t.Errorf("%s: %s does not select %s", r.str("alert"), expr, job)
			}
			for _, m := range metric.FindAllString(expr, -1) {
				name := m
				for _, suffix := range []string{"_count", "_bucket", "_sum"} {
					if base, ok := strings.CutSuffix(m, suffix); ok && families[base] {
						name = base
					}
				}
				if !families[name] {
					t.Errorf("%s: %s is not a family rmsd exports", r.str("alert"), m)
				}
			}
			if r.str("labels", "severity") != "critical" {
				t.Errorf("%s: severity %q, want the values' critical", r.str("alert"), r.str("labels", "severity"))
			}
		}
	}
	for _, want := range []string{"RmsdDown", "RmsdStoreUnavailable", "RmsdJobsFailing", "RmsdNodesHeldWithoutJob"} {
		if !alerts[want] {
			t.Errorf("no alert %s among %v", want, alerts)
		}
	}
}

func keys(m map[string]object) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
