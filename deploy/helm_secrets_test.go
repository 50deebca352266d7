package deploy

import (
	"path"
	"strings"
	"testing"
)

// mountedSecret returns the Secret (and the key behind the file, if the
// volume maps one) that the rmsd container sees at file, by its volume
// mounts.
func mountedSecret(t *testing.T, objects map[string]object, file string) (secret, key string) {
	t.Helper()
	pod := object(objects["Deployment"].get("spec", "template", "spec").(map[string]any))
	c := object(pod.get("containers", "rmsd").(map[string]any))
	for _, m := range c.get("volumeMounts").([]any) {
		mount := object(m.(map[string]any))
		dir := mount.str("mountPath")
		rel, ok := strings.CutPrefix(file, dir+"/")
		if !ok && file != dir {
			continue
		}
		vol, _ := pod.get("volumes", mount.str("name")).(map[string]any)
		if vol == nil {
			t.Fatalf("mount %s has no volume", mount.str("name"))
		}
		v := object(vol)
		if mount.get("readOnly") != true {
			t.Errorf("%s is mounted writable", dir)
		}
		key = rel
		if items, _ := v.get("secret", "items").([]any); items != nil {
			key = ""
			for _, it := range items {
				if item := it.(map[string]any); item["path"] == rel {
					key, _ = item["key"].(string)
				}
			}
		}
		return v.str("secret", "secretName"), key
	}
	return "", ""
}

// TestHelmSecretBackedSettings renders ci/secrets-values.yaml and checks
// that each secret-backed setting of rmsd's configuration names a file or
// directory that the named Secret provides, and that the PostgreSQL URL
// and the extra volume arrive.
func TestHelmSecretBackedSettings(t *testing.T) {
	objects := renderChart(t, "-f", "helm/rmsd/ci/secrets-values.yaml")
	loadRendered(t, objects)
	toml := objects["ConfigMap-config"].str("data", "config.toml")
	setting := func(key string) string {
		for _, line := range strings.Split(toml, "\n") {
			if k, v, ok := strings.Cut(line, " = "); ok && k == key {
				return strings.Trim(v, `"`)
			}
		}
		t.Errorf("config.toml sets no %s:\n%s", key, toml)
		return ""
	}
	files := []struct {
		key, secret, secretKey string
	}{
		{"encryption_key_file", "rms-store-key", "store-keys"},
		{"nvssvt_path", "rms-nvssvt", "nvssvt-2.4"},
	}
	for _, f := range files {
		file := setting(f.key)
		if secret, key := mountedSecret(t, objects, file); secret != f.secret || key != f.secretKey {
			t.Errorf("%s = %q comes from Secret %q key %q, want %q key %q", f.key, file, secret, key, f.secret, f.secretKey)
		}
	}
	dirs := []struct {
		key     string
		domains map[string]string
	}{
		{"switch_cert_root", map[string]string{"rack-fabric": "rms-switch-certs", "spare-fabric": "rms-switch-certs-spare"}},
		{"client_tls_root", map[string]string{"rack-fabric": "rms-client-tls"}},
	}
	for _, d := range dirs {
		root := setting(d.key)
		for domain, want := range d.domains {
			for _, name := range []string{"ca.pem", "client.pem", "client.key"} {
				file := path.Join(root, domain, name)
				if secret, key := mountedSecret(t, objects, file); secret != want || key != name {
					t.Errorf("%s: %s comes from Secret %q key %q, want %q key %q", d.key, file, secret, key, want, name)
				}
			}
		}
	}
	if dir := setting("nvssvt_log_dir"); !strings.HasPrefix(dir, "/var/lib/rms/") {
		t.Errorf("nvssvt_log_dir = %q: want it on the writable state volume", dir)
	}
	if strings.Contains(toml, "rms-postgres") || strings.Contains(toml, "db_url") {
		t.Errorf("the database URL leaks into the ConfigMap:\n%s", toml)
	}
	c := object(objects["Deployment"].get("spec", "template", "spec", "containers", "rmsd").(map[string]any))
	if ref := c.get("env", "DATABASE_URL", "valueFrom", "secretKeyRef"); ref == nil ||
		c.str("env", "DATABASE_URL", "valueFrom", "secretKeyRef", "name") != "rms-postgres" ||
		c.str("env", "DATABASE_URL", "valueFrom", "secretKeyRef", "key") != "url" {
		t.Errorf("DATABASE_URL %v: want it from Secret rms-postgres key url", c.get("env", "DATABASE_URL"))
	}
	pod := object(objects["Deployment"].get("spec", "template", "spec").(map[string]any))
	if pod.str("volumes", "firmware-images", "persistentVolumeClaim", "claimName") != "rms-firmware-images" ||
		c.str("volumeMounts", "firmware-images", "mountPath") != "/srv/firmware" {
		t.Errorf("extraVolumes/extraVolumeMounts not rendered: volumes %v, mounts %v", pod.get("volumes"), c.get("volumeMounts"))
	}
}
