package fabric

// Names the fabric services use on every switch.
const (
	// AppController is the cluster app that runs NMX-C, the fabric manager.
	AppController = "nmx-controller"
	// AppTelemetry is the cluster app that runs NMX-T.
	AppTelemetry = "nmx-telemetry"
	// FileFM is the fabric manager's static config file.
	FileFM = "fm_config"
	// KeyTopology is the fm_config key that holds the topology type.
	KeyTopology = "MNNVL_TOPOLOGY"
)

// Control-plane states the controller app reports in its additional info.
const (
	PlaneConfigured   = "CONTROL_PLANE_STATE_CONFIGURED"
	PlaneUnconfigured = "CONTROL_PLANE_STATE_UNCONFIGURED"
	PlaneStopped      = "CONTROL_PLANE_STATE_STOPPED"
)

// ClusterState is GET /nvue_v1/cluster: the cluster's state ("enabled",
// "disabled", "start") and its NMX-C connection ("up", "down", "n/a").
type ClusterState struct {
	State    string `json:"state"`
	NMXCConn string `json:"nmxc_conn"`
	// Doc is the switch's own /nvue_v1/cluster document (compact JSON).
	Doc string `json:"-"`
}

// Enabled reports whether the cluster runs on the switch.
func (c ClusterState) Enabled() bool { return c.State == "enabled" }

// AppStatus is GET /nvue_v1/cluster/apps/<app>. Installed is false when the
// switch answers 404 (the app is not there); the other fields are then empty.
type AppStatus struct {
	Installed    bool   `json:"installed"`
	Status       string `json:"status"`        // ok | not ok | stopped
	Reason       string `json:"reason"`        // why, when not ok
	ControlPlane string `json:"control_plane"` // one of the Plane* constants, or STOPPED
	Manager      string `json:"manager"`       // external gRPC access: enabled | disabled | start | active
	// Doc is the switch's own app document (compact JSON): status, reason,
	// addition-info, manager, ...; empty when not installed.
	Doc string `json:"-"`
}

// Configured reports whether the app's control plane is configured.
func (a AppStatus) Configured() bool { return a.ControlPlane == PlaneConfigured }

// ConfigKey names one static config entry: a file and a key in it.
type ConfigKey struct {
	File string `json:"config_file_name"`
	Key  string `json:"key"`
}

// ConfigEntry is one static config entry with its value.
type ConfigEntry struct {
	File  string `json:"config_file_name"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Name is the entry's file and key.
func (e ConfigEntry) Name() ConfigKey { return ConfigKey{File: e.File, Key: e.Key} }

// NodeIPs are the addresses the cluster's primary and secondary node
// interfaces serve on; an empty string means the interface has none.
type NodeIPs struct {
	Primary   string `json:"primary"`
	Secondary string `json:"secondary"`
}

// MTLSBinding is whether the NMX-C controller's gRPC service requires mTLS,
// and with which installed certificate and CA certificate ids.
type MTLSBinding struct {
	Bound         bool   `json:"bound"`
	Certificate   string `json:"certificate,omitempty"`
	CACertificate string `json:"ca_certificate,omitempty"`
}
