package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docCommand returns the documented command starting with prefix in the
// Markdown file path (module-root relative), its continuation lines joined,
// split into words.
func docCommand(t *testing.T, path, prefix string) []string {
	t.Helper()
	data, err := os.ReadFile("../" + path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		cmd := line
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		return strings.Fields(cmd)
	}
	t.Fatalf("%s documents no %q command", path, prefix)
	return nil
}

// documentedSANs returns the DNS names of the server certificate that
// docs/operations.md's OpenSSL commands issue.
func documentedSANs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`subjectAltName=([^"']+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("docs/operations.md documents no subjectAltName")
	}
	var names []string
	for _, san := range strings.Split(string(m[1]), ",") {
		if name, ok := strings.CutPrefix(san, "DNS:"); ok {
			names = append(names, name)
		}
	}
	return names
}

// renderDocumented renders the chart as the documented `helm install`
// command in path installs it, and returns the objects and namespace.
func renderDocumented(t *testing.T, path string) (map[string]object, string) {
	t.Helper()
	words := docCommand(t, path, "helm install ")
	if len(words) < 4 || words[3] != "deploy/helm/rmsd" {
		t.Fatalf("%s: %q does not install deploy/helm/rmsd", path, strings.Join(words, " "))
	}
	release, namespace := words[2], "default"
	var args []string
	for i := 4; i < len(words); i++ {
		switch w := words[i]; {
		case (w == "-n" || w == "--namespace") && i+1 < len(words):
			namespace = words[i+1]
			i++
		case (w == "-f" || w == "--values") && i+1 < len(words):
			args = append(args, w, strings.TrimPrefix(words[i+1], "deploy/"))
			i++
		default:
			args = append(args, w)
		}
	}
	return renderRelease(t, release, namespace, args...), namespace
}

// probeServerName returns the --server-name of the rendered readiness
// probe, which runs rmsprobe under mTLS.
func probeServerName(t *testing.T, objects map[string]object) string {
	t.Helper()
	c := object(objects["Deployment"].get("spec", "template", "spec", "containers", "rmsd").(map[string]any))
	cmd, _ := c.get("readinessProbe", "exec", "command").([]any)
	for i, arg := range cmd {
		if arg == "--server-name" && i+1 < len(cmd) {
			return cmd[i+1].(string)
		}
	}
	t.Fatalf("readiness probe %v has no --server-name", c.get("readinessProbe"))
	return ""
}

// TestHelmDocumentedInstallMatchesCertificate renders the chart with the
// install commands of docs/operations.md and docs/deployment.md and checks that the
// probe's server name and the Service's names are among the SANs of the
// server certificate docs/operations.md issues: otherwise every probe
// fails its TLS handshake and the pod never becomes ready.
func TestHelmDocumentedInstallMatchesCertificate(t *testing.T) {
	sans := documentedSANs(t)
	secret := docCommand(t, "docs/operations.md", "kubectl -n rack-manager create secret generic ")[6]
	for _, doc := range []string{"docs/operations.md", "docs/deployment.md"} {
		objects, namespace := renderDocumented(t, doc)
		if name := probeServerName(t, objects); !slices.Contains(sans, name) {
			t.Errorf("%s: the probe expects %q, the documented certificate names %v", doc, name, sans)
		}
		svc := objects["Service"].str("metadata", "name")
		for _, name := range []string{svc, svc + "." + namespace, svc + "." + namespace + ".svc"} {
			if !slices.Contains(sans, name) {
				t.Errorf("%s: clients dial the Service as %q, the documented certificate names %v", doc, name, sans)
			}
		}
		pod := object(objects["Deployment"].get("spec", "template", "spec").(map[string]any))
		if got := pod.str("volumes", "tls", "secret", "secretName"); got != secret {
			t.Errorf("%s: the pod mounts TLS Secret %q, the docs create %q", doc, got, secret)
		}
	}
}
