package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestKubernetesAndToolVariablesDoNotStopLoading is what a pod sees: the
// service links Kubernetes injects for a Service named "rms" and the
// settings of NICo's admin CLI share the RMS_ prefix but override nothing.
func TestKubernetesAndToolVariablesDoNotStopLoading(t *testing.T) {
	environ := []string{
		"RMS_PORT=tcp://10.0.0.1:8801",
		"RMS_SERVICE_HOST=10.0.0.1",
		"RMS_SERVICE_PORT=8801",
		"RMS_SERVICE_PORT_GRPC=8801",
		"RMS_PORT_8801_TCP=tcp://10.0.0.1:8801",
		"RMS_PORT_8801_TCP_PROTO=tcp",
		"RMS_PORT_8801_TCP_PORT=8801",
		"RMS_PORT_8801_TCP_ADDR=10.0.0.1",
		"RMS_API_URL=https://rms.example:8801",
		"RMS_ROOT_CA_PATH=/etc/nico/ca.pem",
		"RMS_ALLOW_INSECURE=1",
	}
	cfg, err := Load(Source{Environ: environ})
	if err != nil {
		t.Fatalf("service-link variables stopped loading: %v", err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("service-link variables changed the configuration: port %d, %+v", cfg.Port, cfg)
	}
}

func TestTopLevelKeysAreOverriddenWithADoubleUnderscore(t *testing.T) {
	cfg, err := Load(Source{Environ: []string{"RMS__PORT=9000", "RMS_SERVER__DRAIN_DELAY_SECONDS=0"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 9000 || cfg.Server.DrainDelaySeconds != 0 {
		t.Fatalf("port = %d, drain_delay_seconds = %d; want 9000, 0", cfg.Port, cfg.Server.DrainDelaySeconds)
	}
}

func TestOverrideVariablesThatNameNoKeyAreErrorsNamingTheVariable(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"RMS_WORKFLOWS__MAX_TRACKED_JOB=1", `unknown key "workflows.max_tracked_job (from RMS_WORKFLOWS__MAX_TRACKED_JOB)"`},
		{"RMS__PORTS=1", `unknown key "ports (from RMS__PORTS)"`},
		{"RMS_WORKFLOW__MAX_TRACKED_JOBS=1", `unknown key "workflow (from RMS_WORKFLOW__MAX_TRACKED_JOBS)"`},
		{"RMS__=1", "RMS__: names no configuration key"},
		{"RMS_WORKFLOWS__=1", "RMS_WORKFLOWS__: names no configuration key"},
		{"RMS__SERVER__BIND_ADDRESS=::1", "RMS__SERVER__BIND_ADDRESS: RMS__<KEY> names a top-level key"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := Load(Source{Environ: []string{tt.give}})
			got := problemsOf(t, err)
			if len(got) != 1 || !strings.Contains(got[0], tt.want) {
				t.Fatalf("problems = %q, want one containing %q", got, tt.want)
			}
		})
	}
}
