package config

import (
	"strings"
	"testing"
)

func TestNVSSVTKeys(t *testing.T) {
	cfg, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Workflows
	if w.NVSSVTPath != "" || w.NVSSVTLogDir != "nvssvt" || w.NVSSVTTimeoutSeconds != 14400 ||
		w.NVSSVTMaxOutputBytes != 1<<20 || w.NVSSVTMaxConcurrent != 4 {
		t.Errorf("defaults %+v", w)
	}
	path := writeConfig(t, `
[workflows]
nvssvt_path = "/opt/nvssvt/bin/nvssvt"
nvssvt_log_dir = "/var/log/rms/nvssvt"
nvssvt_timeout_seconds = 600
nvssvt_max_output_bytes = 4096
`)
	cfg, err = Load(Source{Path: path, Explicit: true, Environ: []string{"RMS_WORKFLOWS__NVSSVT_MAX_CONCURRENT=2"}})
	if err != nil {
		t.Fatal(err)
	}
	w = cfg.Workflows
	if w.NVSSVTPath != "/opt/nvssvt/bin/nvssvt" || w.NVSSVTLogDir != "/var/log/rms/nvssvt" || w.NVSSVTTimeoutSeconds != 600 ||
		w.NVSSVTMaxOutputBytes != 4096 || w.NVSSVTMaxConcurrent != 2 {
		t.Errorf("loaded %+v", w)
	}
}

func TestNVSSVTKeysAreValidated(t *testing.T) {
	path := writeConfig(t, `
[workflows]
nvssvt_path = "nvssvt --quick"
nvssvt_log_dir = " "
nvssvt_timeout_seconds = 0
nvssvt_max_output_bytes = 1073741824
nvssvt_max_concurrent = -1
`)
	_, err := Load(Source{Path: path, Explicit: true})
	got := strings.Join(problemsOf(t, err), "\n")
	for _, want := range []string{
		`workflows.nvssvt_path: "nvssvt --quick" must be an absolute path`,
		"workflows.nvssvt_log_dir: must not be empty",
		"workflows.nvssvt_timeout_seconds: must be greater than 0",
		"workflows.nvssvt_max_output_bytes: must be between 1 and 67108864",
		"workflows.nvssvt_max_concurrent: must be between 1 and 256",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}
