package nvossim

import (
	"net/http"
	"time"
)

// The scale-up fabric, as far as its SDN factory default needs it: a
// cluster that is disabled unless EnableCluster turns it on (only the
// fabric's primary switch has it), its nmx-controller app, and
// POST /nvue_v1/sdn/factory-default.

// Control-plane states of the nmx-controller app.
const (
	planeConfigured   = "CONTROL_PLANE_STATE_CONFIGURED"
	planeUnconfigured = "CONTROL_PLANE_STATE_UNCONFIGURED"
	planeStopped      = "CONTROL_PLANE_STATE_STOPPED"
)

// sdnResetDuration is how long the SDN reset action runs, and then how
// long the fabric manager reports the reset in progress (simulated time).
const sdnResetDuration = 5 * time.Second

// cluster is the switch's scale-up fabric state.
type cluster struct {
	enabled bool
	plane   string    // control-plane state once no reset is in progress
	busyTo  time.Time // the fabric manager reports a reset in progress until then
	resets  int
}

// EnableCluster turns the switch's fabric cluster on (its nmx-controller
// app runs, configured) or off (the app is absent and an SDN factory
// default fails with "cluster is not enabled").
func (s *Switch) EnableCluster(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster = cluster{enabled: on, plane: planeConfigured}
	s.log.Info().Bool("on", on).Msg("cluster enabled")
}

// SDNResets returns how many SDN factory defaults the switch carried out.
func (s *Switch) SDNResets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	return s.cluster.resets
}

// postSDNFactoryReset starts the SDN factory default as an action; on a
// switch whose cluster is disabled the action fails.
func (s *Switch) postSDNFactoryReset(q *nvueReq) reply {
	if _, ok := actionParams(q.body, "reset"); !ok {
		return errReply(http.StatusBadRequest, "expected a @reset action")
	}
	a := s.startActionLocked(q.now, sdnResetDuration, "SDN factory default running", "SDN factory default done",
		func(end time.Time) string {
			if !s.cluster.enabled {
				return "cluster is not enabled"
			}
			s.cluster.resets++
			s.cluster.plane = planeUnconfigured
			s.cluster.busyTo = end.Add(s.cfg.scale(sdnResetDuration))
			return ""
		})
	return actionAccepted(a)
}

// getClusterApp answers for nmx-controller, present only while the cluster
// is enabled.
func (s *Switch) getClusterApp(q *nvueReq) reply {
	if q.r.PathValue("app") != "nmx-controller" || !s.cluster.enabled {
		return errReply(http.StatusNotFound, "no such cluster app "+q.r.PathValue("app"))
	}
	if q.now.Before(s.cluster.busyTo) {
		return reply{http.StatusOK, map[string]any{"status": "not ok", "reason": "FACTORY RESET IN PROGRESS",
			"addition-info": planeStopped}}
	}
	return reply{http.StatusOK, map[string]any{"status": "ok", "reason": "", "addition-info": s.cluster.plane}}
}
