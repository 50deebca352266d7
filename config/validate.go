package config

import (
	"fmt"
	"net"
	"os"
	"sort"
	"strings"

	"github.com/rs/zerolog"
)

// Validate checks the values of a decoded configuration and reports every
// problem at once, or nil.
func (c *Config) Validate() error {
	if p := c.problems(); len(p) > 0 {
		return &Error{Problems: p}
	}
	return nil
}

func (c *Config) problems() []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }

	if c.Port < 0 || c.Port > 65535 {
		add("port: %d is not a TCP port (0-65535)", c.Port)
	}
	if c.Server.DrainDelaySeconds < 0 {
		add("server.drain_delay_seconds: must not be negative")
	}
	if c.Server.ShutdownGraceSeconds < 0 {
		add("server.shutdown_grace_seconds: must not be negative")
	}
	if c.Server.GCPercent < 10 || c.Server.GCPercent > 1000 {
		add("server.gc_percent: %d is outside 10-1000", c.Server.GCPercent)
	}
	if c.Metrics.Port < 0 || c.Metrics.Port > 65535 {
		add("metrics.port: %d is not a TCP port (0-65535)", c.Metrics.Port)
	}
	if c.Metrics.Port != 0 && c.Metrics.Port == c.Port {
		add("metrics.port: must differ from port (both %d)", c.Port)
	}
	if c.Metrics.TLS && (c.TLS.Cert == "" || c.TLS.Key == "") {
		add("metrics.tls: needs tls.cert and tls.key")
	}
	p = append(p, c.TLS.problems()...)
	p = append(p, c.Switches.problems()...)
	p = append(p, c.Admin.problems(c.Port)...)
	p = append(p, c.Authz.problems()...)
	p = append(p, c.Cluster.problems(c.Postgres.DBURL)...)
	p = append(p, c.Audit.problems()...)
	p = append(p, c.Console.problems(c.Port, c.Metrics.Port)...)
	if c.Postgres.DBPoolMax <= 0 {
		add("postgres.db_pool_max: must be greater than 0")
	}
	if c.Postgres.DBURL == "" && strings.TrimSpace(c.Storage.SQLitePath) == "" {
		add("storage.sqlite_path: must not be empty when no PostgreSQL URL is set")
	}
	if t := c.Storage.TimeoutSeconds; t < 1 || t > 60 {
		add("storage.timeout_seconds: must be between 1 and 60")
	}
	w := c.Workflows
	if strings.TrimSpace(w.FirmwareDir) == "" {
		add("workflows.firmware_dir: must not be empty")
	}
	if w.SFTPUploadTimeoutSeconds <= 0 {
		add("workflows.sftp_upload_timeout_seconds: must be greater than 0")
	}
	if w.SFTPStepTimeoutSeconds <= 0 {
		add("workflows.sftp_step_timeout_seconds: must be greater than 0")
	} else if w.SFTPStepTimeoutSeconds > w.SFTPUploadTimeoutSeconds {
		add("workflows.sftp_step_timeout_seconds: must not exceed sftp_upload_timeout_seconds")
	}
	if w.MaxTrackedJobs <= 0 {
		add("workflows.max_tracked_jobs: must be greater than 0")
	}
	if w.MaxBatchNodes <= 0 {
		add("workflows.max_batch_nodes: must be greater than 0")
	}
	if w.TerminalJobTTLSeconds <= 0 {
		add("workflows.terminal_job_ttl_seconds: must be greater than 0")
	}
	if w.DrainTimeoutSeconds < 0 {
		add("workflows.drain_timeout_seconds: must not be negative")
	}
	if w.QuarantineAfterSeconds <= 0 {
		add("workflows.quarantine_after_seconds: must be greater than 0")
	}
	if w.PollScale <= 0 || w.PollScale > 1 {
		add("workflows.poll_scale: must be greater than 0 and at most 1")
	}
	if w.MaxArtifactBytes <= 0 {
		add("workflows.max_artifact_bytes: must be greater than 0")
	}
	p = append(p, w.nvssvtProblems()...)
	p = append(p, w.downloadProblems()...)
	if _, err := ParseLogLevel(c.Logging.LogLevel); err != nil {
		add("logging.log_level: %v", err)
	}
	if c.Logging.Format != "json" && c.Logging.Format != "console" {
		add("logging.format: %q is not one of json, console", c.Logging.Format)
	}
	r := c.Redfish
	for key, v := range map[string]int{
		"connect_timeout_seconds":    r.ConnectTimeoutSeconds,
		"request_timeout_seconds":    r.RequestTimeoutSeconds,
		"upload_timeout_seconds":     r.UploadTimeoutSeconds,
		"task_poll_interval_seconds": r.TaskPollIntervalSeconds,
		"max_concurrent_requests":    r.MaxConcurrentBMCRequests,
	} {
		if v <= 0 {
			add("redfish.%s: must be greater than 0", key)
		}
	}
	if r.TaskTimeoutSeconds < 0 {
		add("redfish.task_timeout_seconds: must be 0 (by node kind) or greater")
	}
	s := c.Simulator
	if s.Racks < 1 || s.Racks > 200 {
		add("simulator.racks: %d is outside 1-200", s.Racks)
	}
	if s.TimeScale <= 0 {
		add("simulator.time_scale: must be greater than 0")
	}
	if strings.TrimSpace(s.NodesFile) == "" {
		add("simulator.nodes_file: must not be empty")
	}
	if s.Network < 1 || s.Network+(s.Racks-1)/256 > 255 {
		add("simulator.network: %d does not fit %d racks in 127.0.0.0/8", s.Network, s.Racks)
	}
	for key, port := range map[string]int{"bmc_port": s.BMCPort, "nvue_port": s.NVUEPort, "ssh_port": s.SSHPort,
		"nmx_port": s.NMXPort, "gnmi_port": s.GNMIPort} {
		if port < 0 || port > 65535 {
			add("simulator.%s: %d is not a TCP port (0-65535)", key, port)
		}
	}
	sort.Strings(p)
	return p
}

func (t TLS) problems() []string {
	var p []string
	set := 0
	for _, v := range []string{t.Cert, t.Key, t.CA} {
		if v != "" {
			set++
		}
	}
	if set != 0 && set != 3 {
		p = append(p, "tls: cert, key and ca must be set together (mTLS only; there is no TLS-without-client-auth mode)")
	}
	if set == 3 && t.Insecure {
		p = append(p, "tls.insecure: cannot be combined with tls.cert/key/ca")
	}
	for key, path := range map[string]string{"tls.cert": t.Cert, "tls.key": t.Key, "tls.ca": t.CA} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			p = append(p, fmt.Sprintf("%s: cannot read %s: %v", key, path, err))
		}
	}
	return p
}

func (s Switches) problems() []string {
	var p []string
	if strings.TrimSpace(s.NMXGatewayID) == "" {
		p = append(p, "switches.nmx_gateway_id: must not be blank")
	}
	if d := s.DefaultSwitchDomain; d != "" && (d == "." || d == ".." || strings.ContainsAny(d, `/\`)) {
		p = append(p, fmt.Sprintf("switches.default_switch_domain: %q is not a directory name", d))
	}
	if !s.InsecureSwitch {
		for key, dir := range map[string]string{"switches.switch_cert_root": s.SwitchCertRoot, "switches.client_tls_root": s.ClientTLSRoot} {
			if dir == "" {
				continue
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				p = append(p, fmt.Sprintf("%s: %s is not a readable directory", key, dir))
			}
		}
		if s.ClientTLSRoot != "" && s.DefaultSwitchDomain == "" {
			p = append(p, "switches.client_tls_root: needs switches.default_switch_domain")
		}
	}
	for key, port := range map[string]int{"ssh_port": s.SSHPort, "nvue_port": s.NVUEPort, "nmx_port": s.NMXPort, "gnmi_port": s.GNMIPort} {
		if port < 1 || port > 65535 {
			p = append(p, fmt.Sprintf("switches.%s: %d is not a TCP port (1-65535)", key, port))
		}
	}
	for key, secs := range map[string]int{"nmx_connect_timeout_seconds": s.NMXConnectTimeoutSeconds, "nmx_request_timeout_seconds": s.NMXRequestTimeoutSeconds} {
		if secs < 1 || secs > 3600 {
			p = append(p, fmt.Sprintf("switches.%s: %d is outside 1-3600", key, secs))
		}
	}
	switch s.SSHHostKeyPolicy {
	case HostKeyAcceptAny:
	case HostKeyKnownHosts:
		if s.SSHKnownHosts == "" {
			p = append(p, "switches.ssh_known_hosts: required when ssh_host_key_policy is known-hosts")
		}
	default:
		p = append(p, fmt.Sprintf("switches.ssh_host_key_policy: %q is not one of accept-any, known-hosts", s.SSHHostKeyPolicy))
	}
	return p
}

// LogLevels is a parsed [logging] log_level directive: a default level and
// per-component overrides.
type LogLevels struct {
	Default    zerolog.Level
	Components map[string]zerolog.Level
}

// ParseLogLevel parses a directive such as "info" or "debug,protoactor=warn".
// An empty directive means info.
func ParseLogLevel(directive string) (LogLevels, error) {
	out := LogLevels{Default: zerolog.InfoLevel, Components: map[string]zerolog.Level{}}
	for _, part := range strings.Split(directive, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, levelText, scoped := strings.Cut(part, "=")
		if !scoped {
			levelText = name
		}
		lvl, err := zerolog.ParseLevel(strings.ToLower(strings.TrimSpace(levelText)))
		if err != nil || levelText == "" {
			return out, fmt.Errorf("%q is not a level (trace, debug, info, warn, error, disabled)", levelText)
		}
		if scoped {
			out.Components[strings.TrimSpace(name)] = lvl
		} else {
			out.Default = lvl
		}
	}
	return out, nil
}

func (c Console) problems(grpcPort, metricsPort int) []string {
	var p []string
	switch c.Enabled {
	case ConsoleAuto, ConsoleOn, ConsoleOff:
	default:
		p = append(p, fmt.Sprintf("console.enabled: %q is not one of auto, on, off", c.Enabled))
	}
	if c.Port < 0 || c.Port > 65535 {
		p = append(p, fmt.Sprintf("console.port: %d is not a TCP port (0-65535)", c.Port))
	}
	if c.Port != 0 && (c.Port == grpcPort || c.Port == metricsPort) {
		p = append(p, fmt.Sprintf("console.port: must differ from port and metrics.port (%d)", c.Port))
	}
	if c.PowerRefreshSeconds < 0 {
		p = append(p, "console.power_refresh_seconds: must not be negative")
	}
	return p
}

func (a Admin) problems(grpcPort int) []string {
	var p []string
	if !IsLoopback(a.BindAddress) {
		p = append(p, fmt.Sprintf("admin.bind_address: %q is not a loopback address (127.0.0.0/8, ::1 or localhost); the admin service is never exposed", a.BindAddress))
	}
	if a.Port < 0 || a.Port > 65535 {
		p = append(p, fmt.Sprintf("admin.port: %d is not a TCP port (0-65535)", a.Port))
	}
	if a.Enabled && a.Port != 0 && a.Port == grpcPort {
		p = append(p, fmt.Sprintf("admin.port: must differ from port (both %d)", a.Port))
	}
	return p
}

// IsLoopback reports whether host (an IP address or "localhost") names the
// loopback interface.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
