package config

// DefaultPath is where rmsd looks for its configuration file when --config is
// not given. A missing file at this path means "use the built-in defaults".
const DefaultPath = "/etc/rms/config.toml"

// Config is the whole configuration tree. The koanf tags are the TOML keys.
//
// Every field carries a doc comment: docs/config-reference.md is generated
// from them (go generate ./config), and its test fails on a field without
// one. A section or key marked "rmsd's own" is not upstream's.
type Config struct {
	// Port is the gRPC port serving both RackManager and RackManagerV2 (0
	// picks a free port, logged at start).
	Port      int       `koanf:"port"`
	Server    Server    `koanf:"server"`
	Metrics   Metrics   `koanf:"metrics"`
	TLS       TLS       `koanf:"tls"`
	Switches  Switches  `koanf:"switches"`
	Postgres  Postgres  `koanf:"postgres"`
	Storage   Storage   `koanf:"storage"`
	Workflows Workflows `koanf:"workflows"`
	Logging   Logging   `koanf:"logging"`
	Redfish   Redfish   `koanf:"redfish"`
	Simulator Simulator `koanf:"simulator"`
	Admin     Admin     `koanf:"admin"`
	Authz     Authz     `koanf:"authz"`
	Cluster   Cluster   `koanf:"cluster"`
	Audit     Audit     `koanf:"audit"`
	Console   Console   `koanf:"console"`
}

// Authz turns on authorization of the gRPC API by client certificate
// (rmsd's own section; docs/authz.md). Without a role everything is
// allowed, as upstream; with one, each RPC needs a permission group that a
// role bound to the caller's verified client certificate grants, on every
// rack the request names.
type Authz struct {
	// Roles are the roles by name, each an [authz.roles.<name>] table:
	// permissions = [groups: read, power, firmware, switch-admin, fabric,
	// destructive, admin] and, optionally, racks = [rack ids or globs] it is
	// limited to.
	Roles map[string]AuthzRole `koanf:"roles"`
	// Bindings grant roles to client certificates, each an
	// [[authz.bindings]] entry: roles = [names] and one or more of cn, ou,
	// dns, uri, each an exact value or a path.Match glob, all of which must
	// match.
	Bindings []AuthzBinding `koanf:"bindings"`
}

// Console configures the read-only web console of racks and jobs (rmsd's
// own section; see docs/console.md).
type Console struct {
	// Enabled is "auto" (served with --simulate only), "on" or "off".
	Enabled string `koanf:"enabled"`
	// Port is the console's own listener on [server] bind_address, with the
	// gRPC API's transport: mTLS with [tls] cert, key and ca (every browser
	// needs a client certificate the CA signed), plaintext otherwise. 0
	// serves the console on the metrics listener instead, with its
	// transport ([metrics] tls, no client certificate). It must differ from
	// port and [metrics] port.
	Port int `koanf:"port"`
	// PowerRefreshSeconds is the pause between two background rounds that
	// read the power state of every registered node a job does not hold,
	// one node at a time, to keep the console's power view current between
	// rmsd's own reads and changes (0: no background rounds; the firmware
	// of a node is still read again when a firmware job on it ends).
	PowerRefreshSeconds int `koanf:"power_refresh_seconds"`
}

// The values of [console] enabled.
const (
	ConsoleAuto = "auto"
	ConsoleOn   = "on"
	ConsoleOff  = "off"
)

// Serves reports whether the console is served, given whether rmsd runs
// with --simulate.
func (c Console) Serves(simulate bool) bool {
	switch c.Enabled {
	case ConsoleOn:
		return true
	case ConsoleOff:
		return false
	default:
		return simulate
	}
}

// Admin configures the admin service (rmsd_admin.Admin): listing and
// killing the job engine's actors, for operators and chaos tests. It is off
// by default and only ever listens on a loopback address (rmsd's own
// section).
type Admin struct {
	// Enabled serves the admin service beside the gRPC API.
	Enabled bool `koanf:"enabled"`
	// BindAddress is the admin listener's address; anything but a loopback
	// address (127.0.0.0/8, ::1, localhost) is refused.
	BindAddress string `koanf:"bind_address"`
	// Port is the admin listener's port, plaintext (0 picks a free one,
	// logged at start); it must differ from port.
	Port int `koanf:"port"`
}

// Server tunes the gRPC listener (rmsd's own section).
type Server struct {
	// BindAddress is the address the gRPC listener binds; upstream binds all
	// interfaces. The metrics listener binds it too.
	BindAddress string `koanf:"bind_address"`
	// DrainDelaySeconds is how long, after a shutdown signal, health reports
	// NOT_SERVING while the listener still accepts connections, so that load
	// balancers and probes stop sending work before connections are refused.
	DrainDelaySeconds int `koanf:"drain_delay_seconds"`
	// ShutdownGraceSeconds bounds how long in-flight RPCs may run after the
	// drain delay before the server stops them.
	ShutdownGraceSeconds int `koanf:"shutdown_grace_seconds"`
	// GCPercent is the Go garbage collector's target: a collection starts
	// when the heap has grown by this percentage of what the last one left
	// live (Go's GOGC, 100 by default). Most of a large site's memory is
	// its pooled BMC connections, and at 100 the heap between collections
	// doubles them; 75 keeps the resident set smaller for some CPU
	// (docs/performance.md): 47–50 KiB per BMC on a site read over and
	// over, where 100 takes about 5 KiB per BMC more and 7 % less CPU per
	// whole-site read. Lower, each step trades more CPU for memory (65 and
	// 60 took 2.5 and 5 KiB per BMC off for 7–8 % more CPU, measured with
	// the earlier transport; 50 a fifth less memory at about a quarter more
	// CPU). 10 to 1000; GOGC in rmsd's environment, when set, wins.
	GCPercent int `koanf:"gc_percent"`
}

// Metrics configures the Prometheus listener (GET /metrics).
type Metrics struct {
	// Port is the metrics listener's port, on [server] bind_address; it must
	// differ from port (0 picks a free one). A port in use stops the start.
	Port int `koanf:"port"`
	// TLS serves metrics over TLS with the gRPC server certificate ([tls]
	// cert and key, both needed); scrapers need no client certificate.
	TLS bool `koanf:"tls"`
	// Pprof also serves Go's runtime profiles (heap, goroutines, CPU) at
	// /debug/pprof/ on the metrics listener, to find where memory or CPU
	// goes. Off by default: they show the daemon's internals (stacks,
	// allocation sites; never memory contents or the command line), so
	// turn it on only where the metrics port is not reachable by others
	// (rmsd's own key).
	Pprof bool `koanf:"pprof"`
}

// TLS configures the northbound gRPC transport: mTLS when Cert, Key and CA
// are set; plaintext only when Insecure is set and RMS_ALLOW_INSECURE=1.
type TLS struct {
	// Cert is the server certificate chain (PEM file); cert, key and ca are
	// set together or not at all. Read once at start.
	Cert string `koanf:"cert"`
	// Key is the server certificate's private key (PEM file).
	Key string `koanf:"key"`
	// CA is the CA bundle (PEM file) that must have signed every client
	// certificate: with cert and key, every connection is mTLS, TLS 1.3.
	CA string `koanf:"ca"`
	// Insecure serves plaintext gRPC (HTTP/2 with prior knowledge), for
	// development only; it also needs RMS_ALLOW_INSECURE=1 in the
	// environment and cannot be combined with cert, key and ca.
	Insecure bool `koanf:"insecure"`
}

// Switches configures how rmsd reaches NVLink switches.
type Switches struct {
	// SwitchCertRoot is the directory of the material ConfigureSwitchCertificate
	// installs on switches: <switch_cert_root>/<domain>/{ca.pem, client.pem,
	// client.key}. It must exist unless insecure_switch is set.
	SwitchCertRoot string `koanf:"switch_cert_root"`
	// ClientTLSRoot is the directory of rmsd's own client identity towards
	// switches (NVUE mTLS): <client_tls_root>/<default_switch_domain>/{ca.pem,
	// client.pem, client.key}. Unset (or insecure_switch) means NVUE over
	// unverified HTTPS. Needs default_switch_domain.
	ClientTLSRoot string `koanf:"client_tls_root"`
	// DefaultSwitchDomain is the domain (a subdirectory name of both roots)
	// used when a request names none.
	DefaultSwitchDomain string `koanf:"default_switch_domain"`
	// DNSDomain is the TLS server name upstream expects from switches on
	// outbound mTLS connections; accepted for compatibility, not used by the
	// RPCs implemented so far.
	DNSDomain string `koanf:"dns_domain"`
	// InsecureSwitch drops mTLS towards switches: NVUE over unverified
	// HTTPS, no certificate roots needed, and ConfigureSwitchCertificate
	// runs the mTLS disable flow instead.
	InsecureSwitch bool `koanf:"insecure_switch"`
	// NMXGatewayID is the gateway id sent to the switches' fabric manager
	// (NMX-C); must not be blank.
	NMXGatewayID string `koanf:"nmx_gateway_id"`
	// SSHPort is the switch SSH/SFTP port (rmsd's own key; upstream always
	// dials 22).
	SSHPort int `koanf:"ssh_port"`
	// NVUEPort is the NVUE HTTPS port used for switch host endpoints whose
	// port is 0 or 22 (rmsd's own key; inventories share one port column
	// for SSH and NVUE).
	NVUEPort int `koanf:"nvue_port"`
	// NMXPort is the NMX-C gRPC port of every switch (rmsd's own key;
	// upstream dials 9370).
	NMXPort int `koanf:"nmx_port"`
	// GNMIPort is the gNMI port of every switch (rmsd's own key; NVOS
	// serves gNMI on 9339).
	GNMIPort int `koanf:"gnmi_port"`
	// NMXConnectTimeoutSeconds bounds connecting to NMX-C (upstream 30 s).
	NMXConnectTimeoutSeconds int `koanf:"nmx_connect_timeout_seconds"`
	// NMXRequestTimeoutSeconds is the deadline of each NMX-C and gNMI call
	// (rmsd's own key, default 30 s).
	NMXRequestTimeoutSeconds int `koanf:"nmx_request_timeout_seconds"`
	// SSHHostKeyPolicy is "accept-any" (upstream's behaviour) or
	// "known-hosts", which checks host keys against ssh_known_hosts (rmsd's
	// own key).
	SSHHostKeyPolicy string `koanf:"ssh_host_key_policy"`
	// SSHKnownHosts is the OpenSSH known_hosts file of the known-hosts
	// policy (rmsd's own key).
	SSHKnownHosts string `koanf:"ssh_known_hosts"`
	// ONIEUsername is the SSH user of a switch's ONIE install environment,
	// which a switch image update with allow_onie_recovery uses on a switch
	// without NVOS (rmsd's own key; ONIE ships with root).
	ONIEUsername string `koanf:"onie_username"`
	// ONIEPassword is the password of onie_username (rmsd's own key; empty
	// by default, as ONIE ships). It is never logged.
	ONIEPassword string `koanf:"onie_password"`
}

// Postgres configures the PostgreSQL store. A URL (or DATABASE_URL) means
// rmsd keeps its state there; unset means the embedded SQLite store
// ([storage]).
type Postgres struct {
	// DBURL is a postgres:// URL or a key=value connection string; a
	// non-empty DATABASE_URL overrides it. An unreachable server or a failed
	// migration stops the start. It may hold a password: never logged.
	DBURL string `koanf:"db_url"`
	// DBPoolMax is the most connections open to PostgreSQL at once.
	DBPoolMax int `koanf:"db_pool_max"`
}

// Storage configures the embedded store used when no PostgreSQL URL is set
// (rmsd's own section).
type Storage struct {
	// SQLitePath is the SQLite database file, created when missing (its
	// directory must exist); relative paths are from the working
	// directory. ":memory:" keeps everything in memory (tests).
	SQLitePath string `koanf:"sqlite_path"`
	// EncryptionKeyFile is the key file (store/keyring) that seals the
	// credentials of registered nodes in the store. Empty: registered
	// nodes are not persisted.
	EncryptionKeyFile string `koanf:"encryption_key_file"`
	// TimeoutSeconds bounds the store calls callers wait on, SQLite or
	// PostgreSQL: one commit of the job journal, one read of the catalog,
	// history, nodes or journal, and one write of the catalog, history or
	// a node change. A store that has not answered by then counts as
	// unavailable: admissions are refused with UNAVAILABLE and no job id,
	// reads and writes of the store answer UNAVAILABLE (nothing written),
	// job status answers from memory. Keep it below the deadlines gRPC
	// clients set.
	TimeoutSeconds int `koanf:"timeout_seconds"`
}

// Workflows configures the job engine and long-running workflows.
type Workflows struct {
	// FirmwareDir holds downloaded artifacts (objects/<object id>/,
	// ephemeral/) and the files firmware and switch image requests name;
	// request paths must lie inside it.
	FirmwareDir string `koanf:"firmware_dir"`
	// SFTPUploadTimeoutSeconds bounds one SFTP upload to a switch as a whole.
	SFTPUploadTimeoutSeconds int `koanf:"sftp_upload_timeout_seconds"`
	// SFTPStepTimeoutSeconds is the stall limit of one SFTP step (open,
	// write, flush); at most sftp_upload_timeout_seconds.
	SFTPStepTimeoutSeconds int `koanf:"sftp_step_timeout_seconds"`
	// MaxTrackedJobs is the most job records kept at once. Only jobs in
	// flight count against it: at the limit the oldest finished records are
	// evicted to make room, and a job is refused only when the jobs in
	// flight alone fill it.
	MaxTrackedJobs int `koanf:"max_tracked_jobs"`
	// MaxBatchNodes is the most nodes one request may name; a request
	// naming more is refused with INVALID_ARGUMENT before anything starts
	// (rmsd's own key).
	MaxBatchNodes int `koanf:"max_batch_nodes"`
	// TerminalJobTTLSeconds is how long a finished job stays queryable
	// before its record is dropped.
	TerminalJobTTLSeconds int `koanf:"terminal_job_ttl_seconds"`
	// DrainTimeoutSeconds bounds how long shutdown waits for running jobs
	// after cancelling them (rmsd's own key). The default, 900, lets a cold
	// reboot whose shelves are off finish: its runbook needs at least 600 s
	// from shelves-off with its default timing, plus up to 45 s to power
	// the shelves back on when the window ends first.
	DrainTimeoutSeconds int `koanf:"drain_timeout_seconds"`
	// QuarantineAfterSeconds is how long a job's workflow may take to
	// return once cancelled (or once its job was ended without it) before
	// the job is quarantined: its nodes stay held, it is flagged in its
	// job status and the admin listing and logged at error, until the
	// workflow returns or an operator releases it (rmsd's own key).
	QuarantineAfterSeconds int `koanf:"quarantine_after_seconds"`
	// PollScale multiplies the intervals at which workflows poll devices
	// they wait on (firmware tasks, BMC and switch reboots, versions after
	// an activation); timeouts are never scaled. 1, the default, keeps
	// upstream's intervals for real hardware. Managing a simulator of
	// another process (rmssim, a cluster's test site) at a time_scale
	// below 1, set it to that time_scale, as `rmsd --simulate` does for
	// its own simulator, whose time_scale it follows instead (rmsd's own
	// key).
	PollScale float64 `koanf:"poll_scale"`
	// MaxArtifactBytes bounds every firmware artifact downloaded for a
	// firmware object, checked while it streams (rmsd's own key).
	MaxArtifactBytes int64 `koanf:"max_artifact_bytes"`
	// AllowInsecureArtifactToken lets a firmware access token go to an
	// artifactory or jfrog location over plain http, logging a warning
	// each time; without it such a download fails and the token is never
	// sent (rmsd's own key).
	AllowInsecureArtifactToken bool `koanf:"allow_insecure_artifact_token"`
	// MaxDownloadsPerHost is how many of the DownloadSlots firmware
	// artifact downloads may come from one host (host and port) at once;
	// the firmware objects whose artifacts wait take free slots in turn,
	// so neither a slow host nor an object with many artifacts can hold
	// them all (rmsd's own key).
	MaxDownloadsPerHost int `koanf:"max_downloads_per_host"`
	// MinDownloadBytesPerSecond is the slowest a firmware artifact
	// download may run, measured over download_rate_window_seconds; a
	// slower one fails, naming the host and its rate. 0 turns the rule off
	// (rmsd's own key).
	MinDownloadBytesPerSecond int64 `koanf:"min_download_bytes_per_second"`
	// DownloadRateWindowSeconds is the window min_download_bytes_per_second
	// is measured over: a download is judged once it has run that long,
	// then continuously over the last window (rmsd's own key).
	DownloadRateWindowSeconds int `koanf:"download_rate_window_seconds"`
	// ExpectedInventoryProfiles maps a profile name (a node's
	// inventory_profile attribute) to what its firmware inventory must
	// list before a firmware job touches it: an array of AP names, or a
	// table with ap_names and/or flint_devices = { cx7, cx8, bf3_nic }.
	ExpectedInventoryProfiles map[string]InventoryProfile `koanf:"expected_inventory_profiles"`
	// NVSSVTPath is the NVSSVT executable StartSystemValidation runs per
	// node; empty (the default) refuses the RPC. `rmsd --simulate` sets it
	// to its own stand-in when it is empty (rmsd's own key: upstream has
	// not implemented the RPC).
	NVSSVTPath string `koanf:"nvssvt_path"`
	// NVSSVTLogDir holds one log directory per scan, named by its job id;
	// a relative path is relative to rmsd's working directory (rmsd's own
	// key).
	NVSSVTLogDir string `koanf:"nvssvt_log_dir"`
	// NVSSVTTimeoutSeconds bounds one scan's run time; the process group
	// is killed after it (rmsd's own key).
	NVSSVTTimeoutSeconds int `koanf:"nvssvt_timeout_seconds"`
	// NVSSVTMaxOutputBytes bounds the stdout and the stderr kept of one
	// scan, each (rmsd's own key).
	NVSSVTMaxOutputBytes int64 `koanf:"nvssvt_max_output_bytes"`
	// NVSSVTMaxConcurrent bounds the NVSSVT processes running at once;
	// further scans wait for a slot (rmsd's own key).
	NVSSVTMaxConcurrent int `koanf:"nvssvt_max_concurrent"`
}

// Bounds of the NVSSVT keys.
const (
	// MaxNVSSVTOutputBytes bounds nvssvt_max_output_bytes: the output is
	// held in memory until the scan ends.
	MaxNVSSVTOutputBytes = 64 << 20
	// MaxNVSSVTConcurrent bounds nvssvt_max_concurrent.
	MaxNVSSVTConcurrent = 256
)

// Logging configures the log output.
type Logging struct {
	// LogLevel is a filter directive: a level ("info"), optionally followed
	// by per-component overrides ("info,protoactor=warn,grpc=error").
	LogLevel string `koanf:"log_level"`
	// EnableTimestamps adds a timestamp to every log line. rmsd's default
	// is true (upstream's is false): a log shipper should not have to add
	// the time of a line it reads late.
	EnableTimestamps bool `koanf:"enable_timestamps"`
	// Format is "json" (one JSON object per line on stdout) or "console"
	// (for humans) (rmsd's own key).
	Format string `koanf:"format"`
}

// Redfish tunes the BMC client (rmsd's own section; defaults are upstream's
// fixed values).
type Redfish struct {
	// VerifyCertificates turns on BMC certificate verification. Upstream
	// never verifies BMC certificates, so the default is false.
	VerifyCertificates bool `koanf:"verify_certificates"`
	// ConnectTimeoutSeconds bounds a TCP and TLS connect to a BMC.
	ConnectTimeoutSeconds int `koanf:"connect_timeout_seconds"`
	// RequestTimeoutSeconds bounds one Redfish request.
	RequestTimeoutSeconds int `koanf:"request_timeout_seconds"`
	// UploadTimeoutSeconds bounds one firmware package upload to a BMC.
	UploadTimeoutSeconds int `koanf:"upload_timeout_seconds"`
	// TaskPollIntervalSeconds is how often a firmware job reads its
	// device's update task.
	TaskPollIntervalSeconds int `koanf:"task_poll_interval_seconds"`
	// TaskTimeoutSeconds bounds every firmware task; 0 (the default) takes
	// upstream's bound by node kind: switch 3 h, compute 90 min, power
	// shelf 60 min.
	TaskTimeoutSeconds int `koanf:"task_timeout_seconds"`
	// MaxConcurrentBMCRequests is the most BMC operations in flight at once
	// across all requests; each BMC still sees one at a time.
	MaxConcurrentBMCRequests int `koanf:"max_concurrent_requests"`
}

// Simulator configures the built-in rack simulator used by `rmsd --simulate`
// and `rmssim` (rmsd's own section).
type Simulator struct {
	// Racks is how many GB200 NVL72 racks the simulator starts (1-200).
	Racks int `koanf:"racks"`
	// TimeScale multiplies every simulated duration: 1 is real time, 0.01
	// makes a ten-minute firmware flash take six seconds.
	TimeScale float64 `koanf:"time_scale"`
	// NodesFile is where the simulated inventory is written, a
	// rack_manager.NodeSet in protobuf JSON with credentials.
	NodesFile string `koanf:"nodes_file"`
	// ReleaseFile is where the simulated firmware release's
	// AddFirmwareObject request is written; empty means
	// simulated-release.json beside nodes_file.
	ReleaseFile string `koanf:"release_file"`
	// Network is the second octet of the simulated devices' loopback
	// addresses: rack r's devices listen on 127.(network+r/256).(r%256).N.
	Network int `koanf:"network"`
	// BMCPort is the Redfish port of every simulated BMC (each device has
	// its own address); 0 picks a free port per device.
	BMCPort int `koanf:"bmc_port"`
	// NVUEPort is the NVUE HTTPS port of every simulated NVOS host; 0 picks
	// one free port all hosts share.
	NVUEPort int `koanf:"nvue_port"`
	// SSHPort is the SSH/SFTP port of every simulated NVOS host; 0 picks
	// one free port all hosts share.
	SSHPort int `koanf:"ssh_port"`
	// NMXPort is the NMX-C gRPC port of every simulated NVOS host; 0 picks
	// one free port all hosts share.
	NMXPort int `koanf:"nmx_port"`
	// GNMIPort is the gNMI port of every simulated NVOS host; 0 picks one
	// free port all hosts share.
	GNMIPort int `koanf:"gnmi_port"`
}

// Default returns the built-in configuration: upstream's defaults plus
// rmsd's own.
func Default() *Config {
	return &Config{
		Port:   8801,
		Server: Server{BindAddress: "0.0.0.0", DrainDelaySeconds: 5, ShutdownGraceSeconds: 30, GCPercent: 75},
		Metrics: Metrics{
			Port: 8802,
		},
		Switches: Switches{
			NMXGatewayID:     "rack-manager-grpc-client",
			SSHPort:          22,
			NVUEPort:         443,
			NMXPort:          9370,
			GNMIPort:         9339,
			SSHHostKeyPolicy: HostKeyAcceptAny,
			ONIEUsername:     "root",

			NMXConnectTimeoutSeconds: 30,
			NMXRequestTimeoutSeconds: 30,
		},
		Postgres: Postgres{DBPoolMax: 20},
		Storage:  Storage{SQLitePath: "rmsd.db", TimeoutSeconds: 5},
		Workflows: Workflows{
			FirmwareDir:              "firmware",
			SFTPUploadTimeoutSeconds: 3600,
			SFTPStepTimeoutSeconds:   30,
			MaxTrackedJobs:           10000,
			MaxBatchNodes:            5000,
			TerminalJobTTLSeconds:    86400,
			DrainTimeoutSeconds:      900,
			QuarantineAfterSeconds:   60,
			PollScale:                1,
			MaxArtifactBytes:         8 << 30,
			NVSSVTLogDir:             "nvssvt",
			NVSSVTTimeoutSeconds:     4 * 3600,
			NVSSVTMaxOutputBytes:     1 << 20,
			NVSSVTMaxConcurrent:      4,

			MaxDownloadsPerHost:       2,
			MinDownloadBytesPerSecond: 64 << 10,
			DownloadRateWindowSeconds: 60,
		},
		Logging: Logging{LogLevel: "info", Format: "json", EnableTimestamps: true},
		Redfish: Redfish{
			ConnectTimeoutSeconds:    10,
			RequestTimeoutSeconds:    30,
			UploadTimeoutSeconds:     600,
			TaskPollIntervalSeconds:  5,
			MaxConcurrentBMCRequests: 256,
		},
		Simulator: Simulator{
			Racks: 1, TimeScale: 0.01, NodesFile: "./simulated-nodes.json",
			Network: 77, BMCPort: 8443, NVUEPort: 8765, SSHPort: 2222, NMXPort: 9370, GNMIPort: 9339,
		},
		Admin: Admin{BindAddress: "127.0.0.1", Port: 8803},
		Cluster: Cluster{
			Provider: ProviderAutomanaged, AutomanagedPort: 6330,
			MembershipTimeoutSeconds: 10, EtcdPrefix: "/rmsd",
		},
		Audit:   Audit{Enabled: true, Output: AuditOutputLog, Store: true, RetentionDays: 90, QueueSize: 1024},
		Console: Console{Enabled: ConsoleAuto, PowerRefreshSeconds: 60},
	}
}

// The SSH host-key policies.
const (
	HostKeyAcceptAny  = "accept-any"
	HostKeyKnownHosts = "known-hosts"
)
