package deploy

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// strictDecoder decodes a rendered YAML document into its Kubernetes API
// type the way the API server's strict field validation does: an unknown
// or duplicated field, a field in the wrong case, a value of the wrong
// type or a kind the scheme does not know is an error. The scheme holds
// the core, apps, policy and RBAC API groups and the Prometheus Operator's
// monitoring group (ServiceMonitor, PrometheusRule).
type strictDecoder struct{ s *kjson.Serializer }

func newStrictDecoder(t *testing.T) strictDecoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme, rbacv1.AddToScheme, monitoringv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return strictDecoder{kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})}
}

func (d strictDecoder) decode(doc []byte) (runtime.Object, error) {
	obj, gvk, err := d.s.Decode(doc, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", gvkOf(gvk), err)
	}
	return obj, nil
}

func gvkOf(gvk fmt.Stringer) string {
	if gvk == nil {
		return "object"
	}
	return gvk.String()
}

// emptyDoc reports whether a rendered document has no object (a template
// that rendered nothing but its "# Source" comment).
func emptyDoc(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && l != "---" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// chartValueSets are the values the chart is checked with: its defaults,
// each CI values file, and monitoring and secrets together.
func chartValueSets(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("helm/rmsd/ci/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("CI values files: %v", err)
	}
	sets := map[string][]string{"default": nil,
		"monitoring+secrets": {"-f", "helm/rmsd/ci/monitoring-values.yaml", "-f", "helm/rmsd/ci/secrets-values.yaml"}}
	for _, f := range files {
		sets[filepath.Base(f)] = []string{"-f", f}
	}
	return sets
}

// TestHelmRenderDecodesStrictly lints the chart with --strict and renders
// it for every values set; every object decodes strictly with its API
// type, and every ConfigMap entry named *.json (the Grafana dashboard) is
// JSON.
func TestHelmRenderDecodesStrictly(t *testing.T) {
	dec := newStrictDecoder(t)
	for name, args := range chartValueSets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each set is two Helm runs
			helm(t, append([]string{"lint", "--strict", "helm/rmsd"}, args...)...)
			kinds := map[string]int{}
			for _, doc := range renderDocs(t, "rms", "rack-manager", args...) {
				if emptyDoc(doc) {
					continue
				}
				obj, err := dec.decode([]byte(doc))
				if err != nil {
					t.Errorf("%v\n%s", err, doc)
					continue
				}
				kinds[fmt.Sprintf("%T", obj)]++
				if cm, ok := obj.(*corev1.ConfigMap); ok {
					for key, v := range cm.Data {
						if strings.HasSuffix(key, ".json") && !json.Valid([]byte(v)) {
							t.Errorf("ConfigMap %s: %s is not JSON", cm.Name, key)
						}
					}
				}
			}
			switch {
			case strings.HasPrefix(name, "cluster"):
				// Cluster mode: the gRPC Service and the members' headless one.
				if kinds["*v1.StatefulSet"] != 1 || kinds["*v1.Deployment"] != 0 || kinds["*v1.Service"] != 2 ||
					kinds["*v1.PodDisruptionBudget"] != 1 || kinds["*v1.ConfigMap"] == 0 {
					t.Errorf("rendered %v: want one StatefulSet, no Deployment, two Services, a PodDisruptionBudget and the ConfigMap", kinds)
				}
			case kinds["*v1.Deployment"] != 1 || kinds["*v1.Service"] != 1 || kinds["*v1.ConfigMap"] == 0:
				t.Errorf("rendered %v: want one Deployment, one Service and the ConfigMap", kinds)
			}
			if strings.Contains(name, "monitoring") && (kinds["*v1.ServiceMonitor"] != 1 || kinds["*v1.PrometheusRule"] != 1) {
				t.Errorf("rendered %v: want the ServiceMonitor and the PrometheusRule", kinds)
			}
		})
	}
}

// TestStrictDecoderRejectsWrongFields proves the checker strict: the
// rendered objects with one field misspelt, misplaced, duplicated or of
// the wrong type, or of an unknown kind, fail to decode, while the same
// objects as rendered decode.
func TestStrictDecoderRejectsWrongFields(t *testing.T) {
	dec := newStrictDecoder(t)
	docs := map[string]string{}
	for _, doc := range renderDocs(t, "rms", "rack-manager", "-f", "helm/rmsd/ci/monitoring-values.yaml") {
		for _, kind := range []string{"Deployment", "PrometheusRule", "ServiceMonitor", "Service"} {
			if strings.Contains(doc, "\nkind: "+kind+"\n") {
				docs[kind] = doc
			}
		}
	}
	for kind, doc := range docs {
		if _, err := dec.decode([]byte(doc)); err != nil {
			t.Fatalf("the rendered %s: %v", kind, err)
		}
	}
	for _, c := range []struct {
		kind, what, old, new, want string
	}{
		{"Deployment", "a misspelt container field", "imagePullPolicy:", "imagePullPolice:", "unknown field"},
		{"Deployment", "a field in the wrong case", "imagePullPolicy:", "ImagePullPolicy:", "unknown field"},
		{"Deployment", "a pod field at the container's level", "imagePullPolicy:", "serviceAccountName: rmsd\n          imagePullPolicy:", "unknown field"},
		{"Deployment", "a number as a string", "terminationGracePeriodSeconds: 1000", `terminationGracePeriodSeconds: "1000"`, "terminationGracePeriodSeconds"},
		{"Service", "a duplicated field", "type: ClusterIP", "type: ClusterIP\n  type: NodePort", `key "type" already set`},
		{"PrometheusRule", "a misspelt rule field", "expr:", "expression:", "unknown field"},
		{"ServiceMonitor", "a misspelt endpoint field", "interval:", "intervall:", "unknown field"},
		{"Service", "an unknown kind", "kind: Service", "kind: Servise", "no kind"},
	} {
		doc, ok := docs[c.kind]
		if !ok || !strings.Contains(doc, c.old) {
			t.Fatalf("%s: no %s rendered with %q", c.what, c.kind, c.old)
		}
		_, err := dec.decode([]byte(strings.Replace(doc, c.old, c.new, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %s: error %v, want one naming %q", c.kind, c.what, err, c.want)
		}
	}
}
