package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/config"
)

const (
	unitPath   = "systemd/rmsd.service"
	dropInPath = "systemd/rmsd.service.d/credentials.conf"
)

// readUnit returns the unit's directives by section, every value of a
// repeated key in order.
func readUnit(t *testing.T) map[string]map[string][]string {
	t.Helper()
	return readUnitFile(t, unitPath)
}

// readUnitFile reads a unit file or drop-in like readUnit.
func readUnitFile(t *testing.T, unitPath string) map[string]map[string][]string {
	t.Helper()
	data, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	unit := map[string]map[string][]string{}
	var section string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			unit[section] = map[string][]string{}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: cannot parse %q", unitPath, line)
			}
			unit[section][key] = append(unit[section][key], value)
		}
	}
	return unit
}

func TestSystemdUnitHardening(t *testing.T) {
	svc := readUnit(t)["Service"]
	last := func(key string) string {
		if v := svc[key]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	if last("DynamicUser") != "yes" && last("User") == "" {
		t.Error("neither DynamicUser=yes nor a dedicated User")
	}
	tests := []struct {
		give string
		want string
	}{
		{give: "ProtectSystem", want: "strict"},
		{give: "NoNewPrivileges", want: "yes"},
		{give: "StateDirectory", want: "rms"},
		{give: "Restart", want: "on-failure"},
		{give: "KillSignal", want: "SIGTERM"},
		{give: "ExecStart", want: "/usr/local/bin/rmsd --config /etc/rms/config.toml"},
	}
	for _, tt := range tests {
		if got := last(tt.give); got != tt.want {
			t.Errorf("%s=%q, want %q", tt.give, got, tt.want)
		}
	}
	if v := last("CapabilityBoundingSet"); v != "" || len(svc["CapabilityBoundingSet"]) == 0 {
		t.Errorf("CapabilityBoundingSet=%q: want it present and empty (rmsd binds no privileged port)", v)
	}
}

// TestSystemdUnitStopTimeoutCoversDrain checks that systemd waits out the
// whole default drain before it kills rmsd.
func TestSystemdUnitStopTimeoutCoversDrain(t *testing.T) {
	svc := readUnit(t)["Service"]
	got, err := strconv.Atoi(strings.Join(svc["TimeoutStopSec"], ""))
	if err != nil {
		t.Fatalf("TimeoutStopSec %v: want a number of seconds", svc["TimeoutStopSec"])
	}
	d := config.Default()
	drain := d.Server.DrainDelaySeconds + d.Server.ShutdownGraceSeconds + d.Workflows.DrainTimeoutSeconds
	if got <= drain {
		t.Errorf("TimeoutStopSec=%d: want more than the default drain, %d s", got, drain)
	}
}

// TestSystemdUnitStateOverrides checks that the unit puts the SQLite file
// and firmware_dir in its StateDirectory, through overrides rmsd accepts.
func TestSystemdUnitStateOverrides(t *testing.T) {
	env := map[string]string{}
	for _, v := range readUnit(t)["Service"]["Environment"] {
		name, value, _ := strings.Cut(strings.Trim(v, `"`), "=")
		env[name] = value
	}
	state := "/var/lib/" + strings.Join(readUnit(t)["Service"]["StateDirectory"], "")
	var environ []string
	for _, name := range []string{"RMS_STORAGE__SQLITE_PATH", "RMS_WORKFLOWS__FIRMWARE_DIR"} {
		if !strings.HasPrefix(env[name], state+"/") {
			t.Errorf("%s=%q: want a path under %s", name, env[name], state)
		}
		environ = append(environ, name+"="+env[name])
	}
	cfg, err := config.Load(config.Source{Environ: environ})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Storage.SQLitePath != env["RMS_STORAGE__SQLITE_PATH"] || cfg.Workflows.FirmwareDir != env["RMS_WORKFLOWS__FIRMWARE_DIR"] {
		t.Errorf("loaded sqlite_path %q, firmware_dir %q: the overrides did not apply", cfg.Storage.SQLitePath, cfg.Workflows.FirmwareDir)
	}
	for _, name := range []string{"RMS_TLS__CERT", "RMS_TLS__KEY", "RMS_TLS__CA"} {
		if !strings.HasPrefix(env[name], "%d/") {
			t.Errorf("%s=%q: want a file in the credentials directory (%%d)", name, env[name])
		}
	}
}

// TestSystemdAnalyzeVerify runs systemd-analyze verify on the unit and its
// credentials drop-in, with ExecStart pointed at an executable that exists
// here (the test binary).
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze not installed: install Debian's systemd package (.ci/run does)")
	}
	data, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "rmsd.service")
	text := strings.ReplaceAll(string(data), "ExecStart=/usr/local/bin/rmsd", "ExecStart="+self)
	if err := os.WriteFile(unit, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	dropIn, err := os.ReadFile(dropInPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(unit), "rmsd.service.d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(dropInPath)), dropIn, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
