package nvossim

import (
	"maps"
	"net/http"
	"time"
)

// The scale-up fabric (southbound §3.12): the cluster, disabled unless
// enabled over SSH or with EnableCluster (only a fabric's primary switch
// has it), its apps nmx-controller and nmx-telemetry, the node-IP settings,
// the controller's static config and its control-plane state machine, and
// POST /nvue_v1/sdn/factory-default.
//
// The control plane of nmx-controller is STOPPED while the app is stopped,
// UNCONFIGURED while the app runs without a topology or has not converged
// yet, and CONFIGURED once it has run with a topology for
// Config.FabricConvergence. The running app works with the fm_config values
// it read when it started: a change of an fm_config value takes effect only
// at the next app (re)start, except the topology of an app that has none
// yet, which it picks up at once.

// Control-plane states of the nmx-controller app.
const (
	planeConfigured   = "CONTROL_PLANE_STATE_CONFIGURED"
	planeUnconfigured = "CONTROL_PLANE_STATE_UNCONFIGURED"
	planeStopped      = "CONTROL_PLANE_STATE_STOPPED"
)

// Names of the fabric's apps and static config.
const (
	appController = "nmx-controller"
	appTelemetry  = "nmx-telemetry"
	fileFM        = "fm_config"
	keyTopology   = "MNNVL_TOPOLOGY"
)

// DefaultTopology is the topology EnableCluster configures.
const DefaultTopology = "gb200_nvl72r1_c2g4_topology"

// sdnResetDuration is how long the SDN reset action runs, and then how
// long the fabric manager reports the reset in progress (simulated time).
const sdnResetDuration = 5 * time.Second

// clusterApp is one cluster app.
type clusterApp struct {
	running  bool
	manager  string // enabled | disabled
	restarts int    // completed @stop/@start pairs and action starts
	// effective is the fm_config the running app works with (controller).
	effective map[string]string
	// readySince is when the app last started with a topology (zero: none).
	readySince time.Time
	// mTLS binding of the app's manager.
	encryption, certID, caID string
}

// cluster is the switch's scale-up fabric state.
type cluster struct {
	enabled bool
	apps    map[string]*clusterApp
	// static is the controller's static config: file -> key -> value.
	static  map[string]map[string]string
	primary string // node IPs; "" = none
	second  string
	gnmi    bool
	// staged by nv set, applied by nv config apply.
	pendingState *bool
	pendingGNMI  *bool
	busyTo       time.Time // the fabric manager reports a reset in progress until then
	resets       int
	faults       fabricFaults
}

// initialStatic is the static config of a switch fresh from the factory:
// no topology yet.
func initialStatic() map[string]map[string]string {
	return map[string]map[string]string{
		fileFM:      {keyTopology: "", "LOG_LEVEL": "4", "FM_STAY_RESIDENT_ON_FAILURES": "0"},
		"sm_config": {"LOG_LEVEL": "1"},
	}
}

// fabricLocked returns the fabric state, created on first use.
func (s *Switch) fabricLocked() *cluster {
	c := &s.cluster
	if c.apps == nil {
		c.apps = map[string]*clusterApp{
			appController: {manager: "disabled", encryption: "none"},
			appTelemetry:  {manager: "disabled", encryption: "none"},
		}
		c.static = initialStatic()
	}
	return c
}

// startAppLocked (re)starts an app: it reads the static fm_config.
func (s *Switch) startAppLocked(name string, now time.Time) {
	a := s.fabricLocked().apps[name]
	a.running = true
	a.effective = maps.Clone(s.cluster.static[fileFM])
	a.readySince = time.Time{}
	if a.effective[keyTopology] != "" {
		a.readySince = now
	}
}

// setClusterLocked turns the cluster on (its apps start) or off (they
// stop and are no longer reported).
func (s *Switch) setClusterLocked(on bool, now time.Time) {
	c := s.fabricLocked()
	if c.enabled == on {
		return
	}
	c.enabled = on
	for name, a := range c.apps {
		if on {
			s.startAppLocked(name, now)
		} else {
			a.running = false
		}
	}
}

// EnableCluster turns the switch's fabric cluster on, configured and
// converged with DefaultTopology and external gRPC access (the state of a
// fabric's provisioned primary), or off (the apps are absent and an SDN
// factory default fails with "cluster is not enabled").
func (s *Switch) EnableCluster(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.fabricLocked()
	now := s.now()
	if on {
		c.static[fileFM][keyTopology] = DefaultTopology
		c.enabled = false
		s.setClusterLocked(true, now)
		for _, a := range c.apps {
			a.manager = "enabled"
			a.readySince = now.Add(-s.cfg.scale(s.cfg.FabricConvergence))
		}
	} else {
		s.setClusterLocked(false, now)
	}
	s.log.Info().Bool("on", on).Msg("cluster enabled")
}

// appViewLocked is an app's status, the reason and (for the controller)
// its control-plane state.
func (s *Switch) appViewLocked(name string, now time.Time) (status, reason, plane string) {
	c := s.fabricLocked()
	a := c.apps[name]
	switch {
	case !a.running:
		return "stopped", "app is stopped", planeStopped
	case now.Before(c.busyTo):
		return "not ok", "FACTORY RESET IN PROGRESS", planeStopped
	case name != appController:
		return "ok", "", ""
	case a.effective[keyTopology] == "":
		return "ok", "topology is not set", planeUnconfigured
	case now.Before(a.readySince.Add(s.cfg.scale(s.cfg.FabricConvergence))):
		return "ok", "", planeUnconfigured
	}
	return "ok", "", planeConfigured
}

// SDNResets returns how many SDN factory defaults the switch carried out.
func (s *Switch) SDNResets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	return s.cluster.resets
}

// postSDNFactoryReset starts the SDN factory default as an action; on a
// switch whose cluster is disabled the action fails. A reset clears the
// controller's topology: it comes back unconfigured.
func (s *Switch) postSDNFactoryReset(q *nvueReq) reply {
	if _, ok := actionParams(q.body, "reset"); !ok {
		return errReply(http.StatusBadRequest, "expected a @reset action")
	}
	a := s.startActionLocked(q.now, sdnResetDuration, "SDN factory default running", "SDN factory default done",
		func(end time.Time) string {
			c := s.fabricLocked()
			if !c.enabled {
				return "cluster is not enabled"
			}
			c.resets++
			c.static = initialStatic()
			s.startAppLocked(appController, end)
			c.busyTo = end.Add(s.cfg.scale(sdnResetDuration))
			return ""
		})
	return actionAccepted(a)
}

// appLocked returns a cluster app the switch reports, or the 404 reply:
// only while the cluster is enabled.
func (s *Switch) appLocked(name string) (*clusterApp, *reply) {
	c := s.fabricLocked()
	a, ok := c.apps[name]
	if !ok || !c.enabled {
		rep := errReply(http.StatusNotFound, "no such cluster app "+name)
		return nil, &rep
	}
	return a, nil
}

// getClusterApp answers for an app, present only while the cluster is
// enabled.
func (s *Switch) getClusterApp(q *nvueReq) reply {
	name := q.r.PathValue("app")
	a, bad := s.appLocked(name)
	if bad != nil {
		return *bad
	}
	status, reason, plane := s.appViewLocked(name, q.now)
	body := map[string]any{"status": status, "reason": reason, "manager": map[string]any{"state": a.manager}}
	if plane != "" {
		body["addition-info"] = plane
	}
	return reply{http.StatusOK, body}
}
