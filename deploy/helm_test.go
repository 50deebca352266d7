package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rmsd/rmsd/config"
)

// object is one rendered Kubernetes object, decoded from YAML as JSON.
type object map[string]any

func (o object) str(path ...string) string {
	v, _ := o.get(path...).(string)
	return v
}

// get walks maps by key and lists by the "name" of their elements.
func (o object) get(path ...string) any {
	var cur any = map[string]any(o)
	for _, key := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[key]
		case []any:
			cur = nil
			for _, e := range c {
				if m, ok := e.(map[string]any); ok && m["name"] == key {
					cur = m
				}
			}
		default:
			return nil
		}
	}
	return cur
}

// renderChart renders deploy/helm/rmsd as the release "rms" in the
// namespace "rack-manager" and returns its objects by kind and name suffix
// (the Service by kind alone).
func renderChart(t *testing.T, args ...string) map[string]object {
	t.Helper()
	return renderRelease(t, "rms", "rack-manager", args...)
}

// renderRelease renders deploy/helm/rmsd with RMSD_HELM (see helm) and
// returns its objects by kind and name suffix.
func renderRelease(t *testing.T, release, namespace string, args ...string) map[string]object {
	t.Helper()
	objects := map[string]object{}
	for _, doc := range renderDocs(t, release, namespace, args...) {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, doc)
		}
		var o object
		if err := json.Unmarshal(js, &o); err != nil {
			t.Fatal(err)
		}
		if o == nil {
			continue
		}
		name := strings.TrimPrefix(o.str("metadata", "name"), release+"-rmsd")
		if o.str("kind") == "Service" {
			name = ""
		}
		objects[o.str("kind")+name] = o
	}
	return objects
}

// helm runs RMSD_HELM (a Helm command), by default .ci/helm.sh (the
// pinned Helm, built from the Go module proxy the first time, from the
// build cache afterwards), and returns its standard output.
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := os.Getenv("RMSD_HELM")
	if bin == "" {
		bin = ".ci/helm.sh" // relative to the module root, like RMSD_HELM
	}
	if !filepath.IsAbs(bin) && strings.Contains(bin, "/") {
		bin = filepath.Join("..", bin)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return out
}

// renderDocs renders deploy/helm/rmsd and returns its YAML documents.
func renderDocs(t *testing.T, release, namespace string, args ...string) []string {
	t.Helper()
	out := helm(t, append([]string{"template", release, "helm/rmsd", "--namespace", namespace,
		"--kube-version", "1.31.0"}, args...)...)
	return strings.Split(string(out), "\n---\n")
}

// loadRendered loads the ConfigMap's config.toml with rmsd's loader. The
// files the chart mounts under /etc/rms are not here, so problems about
// reading them are the only ones allowed.
func loadRendered(t *testing.T, objects map[string]object) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(objects["ConfigMap-config"].str("data", "config.toml")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{Path: path, Explicit: true})
	var cerr *config.Error
	if errors.As(err, &cerr) {
		for _, p := range cerr.Problems {
			if !strings.Contains(p, "cannot read /etc/rms/") && !strings.HasSuffix(p, "is not a readable directory") {
				t.Errorf("rendered config: %s", p)
			}
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestHelmDefaultRender(t *testing.T) {
	objects := renderChart(t)
	loadRendered(t, objects)
	toml := objects["ConfigMap-config"].str("data", "config.toml")
	for _, want := range []string{`cert = "/etc/rms/tls/tls.crt"`, `sqlite_path = "/var/lib/rms/rmsd.db"`, `firmware_dir = "/var/lib/rms/firmware"`} {
		if !strings.Contains(toml, want) {
			t.Errorf("config.toml lacks %s:\n%s", want, toml)
		}
	}

	dep := objects["Deployment"]
	pod := object(dep.get("spec", "template", "spec").(map[string]any))
	if dep.get("spec", "replicas") != float64(1) || dep.str("spec", "strategy", "type") != "Recreate" {
		t.Errorf("replicas %v, strategy %v: want 1 and Recreate", dep.get("spec", "replicas"), dep.get("spec", "strategy"))
	}
	if pod.get("enableServiceLinks") != false {
		t.Error("enableServiceLinks is not false")
	}
	if pod.get("securityContext", "runAsNonRoot") != true {
		t.Error("pod runAsNonRoot is not true")
	}
	c := object(pod.get("containers", "rmsd").(map[string]any))
	if c.get("securityContext", "readOnlyRootFilesystem") != true || c.get("securityContext", "allowPrivilegeEscalation") != false {
		t.Errorf("container securityContext %v", c.get("securityContext"))
	}
	if c.get("readinessProbe", "exec", "command") == nil {
		t.Errorf("under mTLS the readiness probe should run rmsprobe: %v", c.get("readinessProbe"))
	}
	if dep.str("spec", "template", "metadata", "annotations", "checksum/config") == "" {
		t.Error("no checksum/config annotation")
	}
	if pod.str("volumes", "tls", "secret", "secretName") != "rmsd-tls" {
		t.Errorf("tls volume %v: want Secret rmsd-tls", pod.get("volumes", "tls"))
	}
	if pod.get("volumes", "state", "persistentVolumeClaim") == nil || objects["PersistentVolumeClaim-state"] == nil {
		t.Error("state is not on the chart's PersistentVolumeClaim")
	}
	var ports []float64
	for _, p := range objects["Service"].get("spec", "ports").([]any) {
		ports = append(ports, p.(map[string]any)["port"].(float64))
	}
	if len(ports) != 2 || ports[0] != 8801 || ports[1] != 8802 {
		t.Errorf("Service ports %v: want 8801 and 8802", ports)
	}
}

func TestHelmInsecureRender(t *testing.T) {
	objects := renderChart(t, "-f", "helm/rmsd/ci/insecure-values.yaml")
	cfg := loadRendered(t, objects)
	if cfg == nil || !cfg.TLS.Insecure {
		t.Fatalf("config %+v: want [tls] insecure", cfg)
	}
	c := object(objects["Deployment"].get("spec", "template", "spec", "containers", "rmsd").(map[string]any))
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		if c.get(probe, "grpc", "port") != float64(8801) {
			t.Errorf("%s %v: want a native grpc probe on 8801", probe, c.get(probe))
		}
	}
	if c.str("env", "RMS_ALLOW_INSECURE", "value") != "1" {
		t.Error("no RMS_ALLOW_INSECURE=1")
	}
	if c.str("env", "DATABASE_URL", "valueFrom", "secretKeyRef", "name") != "rms-rmsd-database" {
		t.Errorf("DATABASE_URL %v: want it from the chart's Secret", c.get("env", "DATABASE_URL"))
	}
	if objects["Secret-database"].str("stringData", "DATABASE_URL") == "" {
		t.Error("the database Secret has no DATABASE_URL")
	}
}

// TestHelmConfigChangeRollsPod checks that a configuration value changes
// the checksum/config annotation, so the Deployment rolls.
func TestHelmConfigChangeRollsPod(t *testing.T) {
	sum := func(args ...string) string {
		return renderChart(t, args...)["Deployment"].str("spec", "template", "metadata", "annotations", "checksum/config")
	}
	if a, b := sum(), sum("--set", "config.workflows.max_tracked_jobs=500"); a == b {
		t.Errorf("checksum/config %s unchanged by a config value", a)
	}
}
