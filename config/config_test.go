package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("want *config.Error, got %v", err)
	}
	return cfgErr.Problems
}

func TestDefaultsMatchUpstream(t *testing.T) {
	cfg, err := Load(Source{Path: filepath.Join(t.TempDir(), "absent.toml")})
	if err != nil {
		t.Fatalf("missing default file must mean defaults, got %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"port", cfg.Port, 8801},
		{"metrics.port", cfg.Metrics.Port, 8802},
		{"metrics.tls", cfg.Metrics.TLS, false},
		{"tls.insecure", cfg.TLS.Insecure, false},
		{"switches.nmx_gateway_id", cfg.Switches.NMXGatewayID, "rack-manager-grpc-client"},
		{"switches.insecure_switch", cfg.Switches.InsecureSwitch, false},
		{"postgres.db_pool_max", cfg.Postgres.DBPoolMax, 20},
		{"postgres.db_url", cfg.Postgres.DBURL, ""},
		{"storage.sqlite_path", cfg.Storage.SQLitePath, "rmsd.db"},
		{"storage.timeout_seconds", cfg.Storage.TimeoutSeconds, 5},
		{"workflows.firmware_dir", cfg.Workflows.FirmwareDir, "firmware"},
		{"workflows.sftp_upload_timeout_seconds", cfg.Workflows.SFTPUploadTimeoutSeconds, 3600},
		{"workflows.sftp_step_timeout_seconds", cfg.Workflows.SFTPStepTimeoutSeconds, 30},
		{"workflows.max_tracked_jobs", cfg.Workflows.MaxTrackedJobs, 10000},
		{"workflows.max_batch_nodes", cfg.Workflows.MaxBatchNodes, 5000},
		{"workflows.terminal_job_ttl_seconds", cfg.Workflows.TerminalJobTTLSeconds, 86400},
		{"workflows.max_artifact_bytes", cfg.Workflows.MaxArtifactBytes, int64(8 << 30)},
		{"workflows.quarantine_after_seconds", cfg.Workflows.QuarantineAfterSeconds, 60},
		{"workflows.poll_scale", cfg.Workflows.PollScale, 1.0},
		{"logging.enable_timestamps", cfg.Logging.EnableTimestamps, true},
		{"logging.format", cfg.Logging.Format, "json"},
		{"switches.ssh_port", cfg.Switches.SSHPort, 22},
		{"switches.nvue_port", cfg.Switches.NVUEPort, 443},
		{"switches.nmx_port", cfg.Switches.NMXPort, 9370},
		{"switches.gnmi_port", cfg.Switches.GNMIPort, 9339},
		{"switches.nmx_connect_timeout_seconds", cfg.Switches.NMXConnectTimeoutSeconds, 30},
		{"switches.nmx_request_timeout_seconds", cfg.Switches.NMXRequestTimeoutSeconds, 30},
		{"server.drain_delay_seconds", cfg.Server.DrainDelaySeconds, 5},
		{"server.gc_percent", cfg.Server.GCPercent, 75},
		{"redfish.verify_certificates", cfg.Redfish.VerifyCertificates, false},
		{"simulator.racks", cfg.Simulator.Racks, 1},
		{"simulator.nodes_file", cfg.Simulator.NodesFile, "./simulated-nodes.json"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestExplicitMissingFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.toml")
	_, err := Load(Source{Path: path, Explicit: true})
	if err == nil || !strings.Contains(err.Error(), "configuration file not found: "+path) {
		t.Fatalf("got %v", err)
	}
}

func TestFileValuesOverrideDefaults(t *testing.T) {
	cfg, err := Load(Source{Path: "testdata/full.toml", Explicit: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 9100 || cfg.Metrics.Port != 9101 || !cfg.TLS.Insecure {
		t.Errorf("top-level values not applied: %+v", cfg)
	}
	if cfg.Workflows.MaxTrackedJobs != 500 || cfg.Workflows.TerminalJobTTLSeconds != 60 {
		t.Errorf("workflows not applied: %+v", cfg.Workflows)
	}
	if cfg.Workflows.SFTPStepTimeoutSeconds != 30 {
		t.Errorf("unset key lost its default: %d", cfg.Workflows.SFTPStepTimeoutSeconds)
	}
	if cfg.Storage.EncryptionKeyFile != "/etc/rms/store-keys" {
		t.Errorf("storage.encryption_key_file = %q", cfg.Storage.EncryptionKeyFile)
	}
	if cfg.Storage.SQLitePath != "/var/lib/rms/rmsd.db" {
		t.Errorf("storage.sqlite_path = %q", cfg.Storage.SQLitePath)
	}
	if cfg.Workflows.MaxArtifactBytes != 10<<30 {
		t.Errorf("max_artifact_bytes = %d, want 10 GiB", cfg.Workflows.MaxArtifactBytes)
	}
	legacy := cfg.Workflows.ExpectedInventoryProfiles["legacy"]
	if got := strings.Join(legacy.APNames, ","); got != "FW_BMC_0,HGX_FW_GPU_0" {
		t.Errorf("legacy profile AP names = %s (duplicates must be dropped case-insensitively)", got)
	}
	prod := cfg.Workflows.ExpectedInventoryProfiles["gb200-prod"]
	if prod.FlintDevices["cx7"] != 4 || prod.FlintDevices["bf3_nic"] != 0 {
		t.Errorf("flint devices = %v", prod.FlintDevices)
	}
	if _, checked := prod.FlintDevices["cx8"]; checked {
		t.Error("an omitted flint family must not be checked")
	}
	levels, err := ParseLogLevel(cfg.Logging.LogLevel)
	if err != nil || levels.Default != zerolog.DebugLevel || levels.Components["protoactor"] != zerolog.WarnLevel {
		t.Errorf("log level %q parsed as %+v, %v", cfg.Logging.LogLevel, levels, err)
	}
}

func TestEnvironmentOverridesFile(t *testing.T) {
	env := []string{
		"RMS__PORT=9000",
		"RMS_WORKFLOWS__MAX_TRACKED_JOBS=42",
		"RMS_WORKFLOWS__MAX_ARTIFACT_BYTES=17179869184",
		"RMS_SWITCHES__NVUE_PORT=8443",
		"RMS_LOGGING__ENABLE_TIMESTAMPS=false",
		"RMS_SIMULATOR__TIME_SCALE=0.5",
		"RMS_STORAGE__SQLITE_PATH=/var/lib/rmsd/state.db",
		"DATABASE_URL=postgres://rms@db/rms",
		"RMS_ALLOW_INSECURE=1",
		"HOME=/root",
	}
	cfg, err := Load(Source{Path: "testdata/full.toml", Explicit: true, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 9000 {
		t.Errorf("RMS__PORT: port = %d", cfg.Port)
	}
	if cfg.Switches.NVUEPort != 8443 {
		t.Errorf("RMS_SWITCHES__NVUE_PORT: nvue_port = %d", cfg.Switches.NVUEPort)
	}
	if cfg.Workflows.MaxTrackedJobs != 42 {
		t.Errorf("max_tracked_jobs = %d", cfg.Workflows.MaxTrackedJobs)
	}
	if cfg.Workflows.MaxArtifactBytes != 16<<30 {
		t.Errorf("max_artifact_bytes = %d", cfg.Workflows.MaxArtifactBytes)
	}
	if cfg.Logging.EnableTimestamps || cfg.Simulator.TimeScale != 0.5 {
		t.Errorf("bool/float env values not applied: %+v %+v", cfg.Logging, cfg.Simulator)
	}
	if cfg.Postgres.DBURL != "postgres://rms@db/rms" {
		t.Errorf("DATABASE_URL not applied: %q", cfg.Postgres.DBURL)
	}
	if cfg.Storage.SQLitePath != "/var/lib/rmsd/state.db" {
		t.Errorf("RMS_STORAGE__SQLITE_PATH: sqlite_path = %q", cfg.Storage.SQLitePath)
	}
}

func TestStorageSettings(t *testing.T) {
	const url = "postgres://db/rms"
	tests := []struct {
		name    string
		give    string
		environ []string
		want    string // the one problem expected, or "" for none
		// When valid: the PostgreSQL URL ("" selects SQLite) and the
		// SQLite path the configuration names.
		wantURL, wantPath string
	}{
		{name: "sqlite path from the file", give: "[storage]\nsqlite_path = \"state/rmsd.db\"\n", wantPath: "state/rmsd.db"},
		{name: "in memory", give: "[storage]\nsqlite_path = \":memory:\"\n", wantPath: ":memory:"},
		{name: "empty sqlite path", give: "[storage]\nsqlite_path = \" \"\n", want: "storage.sqlite_path: must not be empty when no PostgreSQL URL is set"},
		{name: "empty sqlite path beside a database URL", give: "[storage]\nsqlite_path = \"\"\n", environ: []string{"DATABASE_URL=" + url}, wantURL: url},
		{name: "db_url from the file", give: "[postgres]\ndb_url = \"" + url + "\"\ndb_pool_max = 3\n", wantURL: url, wantPath: "rmsd.db"},
		{name: "empty DATABASE_URL keeps SQLite", environ: []string{"DATABASE_URL="}, wantPath: "rmsd.db"},
		{name: "empty DATABASE_URL keeps the file's db_url", give: "[postgres]\ndb_url = \"" + url + "\"\n", environ: []string{"DATABASE_URL="}, wantURL: url, wantPath: "rmsd.db"},
		{name: "unknown storage key", give: "[storage]\npath = \"x.db\"\n", want: `unknown key "storage.path"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(Source{Path: writeConfig(t, tt.give), Explicit: true, Environ: tt.environ})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load = %v", err)
				}
				if cfg.Postgres.DBURL != tt.wantURL || cfg.Storage.SQLitePath != tt.wantPath {
					t.Fatalf("db_url %q, sqlite_path %q; want %q, %q", cfg.Postgres.DBURL, cfg.Storage.SQLitePath, tt.wantURL, tt.wantPath)
				}
				return
			}
			if got := problemsOf(t, err); len(got) != 1 || !strings.Contains(got[0], tt.want) {
				t.Fatalf("problems = %q, want one containing %q", got, tt.want)
			}
		})
	}
}

func TestUnknownKeyNamesItsDottedPath(t *testing.T) {
	path := writeConfig(t, "[postgres]\ndb_pool_maxx = 3\n")
	_, err := Load(Source{Path: path, Explicit: true})
	got := problemsOf(t, err)
	if len(got) != 1 || !strings.Contains(got[0], `unknown key "postgres.db_pool_maxx"`) {
		t.Fatalf("problems = %q", got)
	}
}

func TestUnknownEnvironmentKeyNamesTheVariable(t *testing.T) {
	_, err := Load(Source{Environ: []string{"RMS_WORKFLOWS__MAX_TRACKED_JOB=1"}})
	got := problemsOf(t, err)
	if len(got) != 1 || !strings.Contains(got[0], "workflows.max_tracked_job (from RMS_WORKFLOWS__MAX_TRACKED_JOB)") {
		t.Fatalf("problems = %q", got)
	}
}

func TestWrongTypeNamesKeyAndExpectedType(t *testing.T) {
	tests := []struct {
		name string
		give string
		env  []string
		want string
	}{
		{"string for int", "port = \"eighty\"\n", nil, "port: expected an integer, got a string"},
		{"int for bool", "[tls]\ninsecure = 1\n", nil, "tls.insecure: expected a boolean, got an integer"},
		{"table for string", "[logging.log_level]\nx = 1\n", nil, "logging.log_level: expected a string, got a table"},
		{"scalar for section", "workflows = 3\n", nil, "workflows: expected a table, got an integer"},
		{"env not a number", "", []string{"RMS_WORKFLOWS__MAX_TRACKED_JOBS=many"},
			"workflows.max_tracked_jobs (from RMS_WORKFLOWS__MAX_TRACKED_JOBS): expected an integer, got a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Source{Path: writeConfig(t, tt.give), Explicit: true, Environ: tt.env})
			got := problemsOf(t, err)
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("problems = %q, want [%q]", got, tt.want)
			}
		})
	}
}

func TestEveryProblemIsReportedTogether(t *testing.T) {
	path := writeConfig(t, `
port = "x"
bogus = 1

[workflows]
max_tracked_jobs = 0
max_batch_nodes = 0
sftp_step_timeout_seconds = 7200
max_artifact_bytes = 0
quarantine_after_seconds = 0
poll_scale = 2

[storage]
timeout_seconds = 0

[tls]
cert = "/nonexistent/cert.pem"

[logging]
format = "xml"
`)
	_, err := Load(Source{Path: path, Explicit: true})
	got := problemsOf(t, err)
	want := []string{
		"port: expected an integer",
		`unknown key "bogus"`,
		"workflows.max_tracked_jobs: must be greater than 0",
		"workflows.max_batch_nodes: must be greater than 0",
		"workflows.sftp_step_timeout_seconds: must not exceed sftp_upload_timeout_seconds",
		"workflows.max_artifact_bytes: must be greater than 0",
		"workflows.quarantine_after_seconds: must be greater than 0",
		"workflows.poll_scale: must be greater than 0 and at most 1",
		"storage.timeout_seconds: must be between 1 and 60",
		"tls: cert, key and ca must be set together",
		"logging.format",
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, w)
		}
		if !found {
			t.Errorf("missing problem %q in %q", w, got)
		}
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("(%d problems)", len(got))) {
		t.Errorf("error text %q should say how many problems", err)
	}
}

func TestInventoryProfileValidation(t *testing.T) {
	path := writeConfig(t, `
[workflows.expected_inventory_profiles]
" " = ["FW_BMC_0"]
empty = []
bad-family = { flint_devices = { cx9 = 1 } }
blank-ap = ["FW_BMC_0", ""]
`)
	_, err := Load(Source{Path: path, Explicit: true})
	got := strings.Join(problemsOf(t, err), "\n")
	for _, w := range []string{
		"profile name is empty",
		`workflows.expected_inventory_profiles.empty: profile needs ap_names, flint_devices or both`,
		`unknown key "workflows.expected_inventory_profiles.bad-family.flint_devices.cx9`,
		"workflows.expected_inventory_profiles.blank-ap: AP name is empty",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}

func TestSecretValuesAreNotEchoedInErrors(t *testing.T) {
	_, err := Load(Source{Environ: []string{"RMS_POSTGRES__DB_POOL_MAX=hunter2-secret"}})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error must not echo the value: %v", err)
	}
}

func TestChooseTransport(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		tls     TLS
		environ []string
		want    Transport
		wantErr error
	}{
		{"mtls", TLS{Cert: dir + "/c", Key: dir + "/k", CA: dir + "/ca"}, nil, TransportMTLS, nil},
		{"neither", TLS{}, nil, 0, ErrNoTransport},
		{"insecure without env", TLS{Insecure: true}, nil, 0, ErrInsecureNotAllowed},
		{"insecure env wrong value", TLS{Insecure: true}, []string{"RMS_ALLOW_INSECURE=true"}, 0, ErrInsecureNotAllowed},
		{"env without insecure", TLS{}, []string{"RMS_ALLOW_INSECURE=1"}, 0, ErrNoTransport},
		{"both switches", TLS{Insecure: true}, []string{"RMS_ALLOW_INSECURE=1"}, TransportInsecure, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.tls.ChooseTransport(tt.environ)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("got %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestTOMLSyntaxErrorNamesLineAndColumn(t *testing.T) {
	path := writeConfig(t, "port = 8801\n\n[server]\ndrain_delay_seconds = = 3\n")
	_, err := Load(Source{Path: path, Explicit: true})
	got := problemsOf(t, err)
	want := path + ": TOML syntax error at line 4, column 23: "
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Fatalf("problems = %q, want one starting %q", got, want)
	}
	if !strings.Contains(err.Error(), "(1 problem): ") {
		t.Errorf("error = %q, want a one-problem summary", err)
	}
}

func TestErrorSummaryCountsProblemsInGoodEnglish(t *testing.T) {
	tests := []struct {
		give []string
		want string
	}{
		{[]string{"a"}, "invalid configuration (1 problem): a"},
		{[]string{"a", "b"}, "invalid configuration (2 problems): a; b"},
	}
	for _, tt := range tests {
		if got := (&Error{Problems: tt.give}).Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	_, err := Load(Source{Environ: []string{"RMS__PORT=70000"}})
	if err == nil || !strings.HasPrefix(err.Error(), "invalid configuration (1 problem): port: 70000") {
		t.Errorf("Load error = %v", err)
	}
}

func TestServerAndSwitchPortKeysAreValidated(t *testing.T) {
	tests := []struct {
		give string
		want string // "" means valid
	}{
		{"[switches]\nnvue_port = 8443\n", ""},
		{"[switches]\nnvue_port = 0\n", "switches.nvue_port: 0 is not a TCP port (1-65535)"},
		{"[switches]\nnvue_port = 65536\n", "switches.nvue_port: 65536 is not a TCP port (1-65535)"},
		{"[switches]\nnmx_port = 9371\ngnmi_port = 50051\n", ""},
		{"[switches]\nnmx_port = 0\n", "switches.nmx_port: 0 is not a TCP port (1-65535)"},
		{"[switches]\ngnmi_port = 70000\n", "switches.gnmi_port: 70000 is not a TCP port (1-65535)"},
		{"[switches]\nnmx_request_timeout_seconds = 0\n", "switches.nmx_request_timeout_seconds: 0 is outside 1-3600"},
		{"[simulator]\nnmx_port = -1\n", "simulator.nmx_port: -1 is not a TCP port (0-65535)"},
		{"[server]\ndrain_delay_seconds = 0\n", ""},
		{"[server]\ndrain_delay_seconds = -1\n", "server.drain_delay_seconds: must not be negative"},
		{"[server]\ngc_percent = 50\n", ""},
		{"[server]\ngc_percent = 5\n", "server.gc_percent: 5 is outside 10-1000"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := Load(Source{Path: writeConfig(t, tt.give), Explicit: true})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid configuration refused: %v", err)
				}
				return
			}
			if got := problemsOf(t, err); len(got) != 1 || got[0] != tt.want {
				t.Fatalf("problems = %q, want [%q]", got, tt.want)
			}
		})
	}
}

func TestAdminServiceListensOnLoopbackOnly(t *testing.T) {
	cfg, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Admin.Enabled || cfg.Admin.BindAddress != "127.0.0.1" || cfg.Admin.Port != 8803 {
		t.Fatalf("admin defaults %+v", cfg.Admin)
	}
	for _, give := range []string{"127.0.0.1", "127.9.9.9", "::1", "localhost"} {
		if _, err := Load(Source{Environ: []string{"RMS_ADMIN__ENABLED=true", "RMS_ADMIN__BIND_ADDRESS=" + give}}); err != nil {
			t.Errorf("loopback %s refused: %v", give, err)
		}
	}
	for _, give := range []string{"0.0.0.0", "10.0.0.1", "::", "rmsd.example.com", ""} {
		_, err := Load(Source{Environ: []string{"RMS_ADMIN__ENABLED=true", "RMS_ADMIN__BIND_ADDRESS=" + give}})
		got := problemsOf(t, err)
		if len(got) != 1 || !strings.HasPrefix(got[0], "admin.bind_address: ") || !strings.Contains(got[0], "not a loopback address") {
			t.Errorf("bind_address %q: problems %q", give, got)
		}
	}
}

func TestConsoleIsOnWithSimulateOnlyUnlessSaid(t *testing.T) {
	cfg, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Console.Enabled != ConsoleAuto || cfg.Console.Port != 0 || cfg.Console.PowerRefreshSeconds != 60 {
		t.Fatalf("console defaults %+v", cfg.Console)
	}
	for _, c := range []struct {
		enabled            string
		simulate, hardware bool
	}{{ConsoleAuto, true, false}, {ConsoleOn, true, true}, {ConsoleOff, false, false}} {
		got := Console{Enabled: c.enabled}
		if got.Serves(true) != c.simulate || got.Serves(false) != c.hardware {
			t.Errorf("enabled %q: serves %v with --simulate, %v without", c.enabled, got.Serves(true), got.Serves(false))
		}
	}
	for env, want := range map[string]string{
		"RMS_CONSOLE__ENABLED=yes":              "console.enabled: ",
		"RMS_CONSOLE__PORT=8801":                "console.port: must differ",
		"RMS_CONSOLE__PORT=70000":               "console.port: 70000 is not a TCP port",
		"RMS_CONSOLE__POWER_REFRESH_SECONDS=-1": "console.power_refresh_seconds: ",
	} {
		got := problemsOf(t, func() error { _, err := Load(Source{Environ: []string{env}}); return err }())
		if len(got) != 1 || !strings.HasPrefix(got[0], want) {
			t.Errorf("%s: problems %q, want one starting %q", env, got, want)
		}
	}
}
