package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/config"
)

// systemdUnescape undoes systemd's $$ and %% escapes in a command line,
// after replacing the specifiers in spec.
func systemdUnescape(s string, spec map[string]string) string {
	s = strings.ReplaceAll(s, "%%", "\x00")
	for k, v := range spec {
		s = strings.ReplaceAll(s, k, v)
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\x00", "%"), "$$", "$")
}

// TestSystemdCredentialsDropIn plays systemd's part for the credentials
// drop-in: it lays out $CREDENTIALS_DIRECTORY as LoadCredential does (a
// directory becomes flat <id>_<file> credentials), runs the drop-in's
// ExecStartPre, and loads rmsd's configuration with the drop-in's
// overrides. The key file and every switch certificate must be readable
// where the configuration points, in rmsd's <root>/<domain>/<file> layout.
func TestSystemdCredentialsDropIn(t *testing.T) {
	svc := readUnitFile(t, dropInPath)["Service"]
	tmp := t.TempDir()
	creds := filepath.Join(tmp, "credentials")
	runtime := filepath.Join(tmp, "run")
	if err := os.MkdirAll(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	// The content of each credential is its source path, so that the test
	// can tell which host file rmsd would read.
	for _, lc := range svc["LoadCredential"] {
		id, src, _ := strings.Cut(lc, ":")
		files := []string{""}
		if strings.Contains(src, "/switch-certs/") || strings.Contains(src, "/client-tls/") {
			files = []string{"ca.pem", "client.pem", "client.key"}
		}
		for _, f := range files {
			name, content := id, src
			if f != "" {
				name, content = id+"_"+f, src+"/"+f
			}
			if err := os.WriteFile(filepath.Join(creds, name), []byte(content), 0o400); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := strings.Join(svc["RuntimeDirectory"], ""); got != "rms" {
		t.Fatalf("RuntimeDirectory=%q: want rms (the ExecStartPre writes there)", got)
	}
	spec := map[string]string{"%d": creds, "%t": runtime}
	env := []string{"CREDENTIALS_DIRECTORY=" + creds, "RUNTIME_DIRECTORY=" + filepath.Join(runtime, "rms"), "PATH=" + os.Getenv("PATH")}
	if err := os.MkdirAll(filepath.Join(runtime, "rms"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, pre := range svc["ExecStartPre"] {
		argv := strings.SplitN(systemdUnescape(pre, spec), " ", 3)
		if len(argv) != 3 || argv[0] != "/bin/sh" {
			t.Fatalf("ExecStartPre=%s: want /bin/sh -ec '<script>'", pre)
		}
		cmd := exec.Command(argv[0], argv[1], strings.Trim(argv[2], "'"))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ExecStartPre: %v\n%s", err, out)
		}
	}

	environ := []string{"RMS_SWITCHES__DEFAULT_SWITCH_DOMAIN=rack-fabric"}
	for _, v := range svc["Environment"] {
		environ = append(environ, systemdUnescape(v, spec))
	}
	cfg, err := config.Load(config.Source{Environ: environ})
	if err != nil {
		t.Fatalf("rmsd's configuration with the drop-in's overrides: %v", err)
	}
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("rmsd cannot read %s: %v", path, err)
		}
		return string(data)
	}
	if got := read(cfg.Storage.EncryptionKeyFile); got != "/etc/rms/store-keys" {
		t.Errorf("encryption_key_file %s holds %q: want the host's /etc/rms/store-keys", cfg.Storage.EncryptionKeyFile, got)
	}
	roots := map[string]string{cfg.Switches.SwitchCertRoot: "/etc/rms/switch-certs/", cfg.Switches.ClientTLSRoot: "/etc/rms/client-tls/"}
	for root, host := range roots {
		if root == "" {
			t.Fatalf("switch_cert_root %q, client_tls_root %q: want both set", cfg.Switches.SwitchCertRoot, cfg.Switches.ClientTLSRoot)
		}
		for _, f := range []string{"ca.pem", "client.pem", "client.key"} {
			if got, want := read(filepath.Join(root, "rack-fabric", f)), host+"rack-fabric/"+f; got != want {
				t.Errorf("%s/rack-fabric/%s holds %q: want the host's %s", root, f, got, want)
			}
		}
	}
}
