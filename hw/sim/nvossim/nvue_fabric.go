package nvossim

import (
	"net/http"
	"time"
)

// NVUE resources of the scale-up fabric beyond the app status (see
// nvue_cluster.go): the cluster state, app lifecycle actions, app managers
// and their mTLS binding, and the node-IP settings staged in revisions.

// appActionDuration is how long an app @stop, @start or manager @update
// runs (simulated time).
const appActionDuration = 2 * time.Second

func (s *Switch) fabricRoutes(route func(pattern string, f nvueFunc)) {
	route("GET /nvue_v1/cluster", s.getCluster)
	route("GET /nvue_v1/cluster/apps/{app}", s.getClusterApp)
	route("POST /nvue_v1/cluster/apps/{app}", s.postClusterApp)
	route("GET /nvue_v1/cluster/apps/{app}/manager", s.getAppManager)
	route("GET /nvue_v1/cluster/apps/{app}/manager/{leaf}", s.getAppManagerLeaf)
	route("POST /nvue_v1/cluster/apps/{app}/manager/{leaf}", s.postAppManagerLeaf)
	route("GET /nvue_v1/cluster/node/{iface}/server", s.getNodeServer)
	route("PATCH /nvue_v1/cluster/node/{iface}/server", s.patchNodeServer)
	route("DELETE /nvue_v1/cluster/node/{iface}", s.deleteNode)
}

func (s *Switch) getCluster(q *nvueReq) reply {
	c := s.fabricLocked()
	conn := "n/a"
	if c.enabled {
		conn = "down"
		if ctl := c.apps[appController]; ctl.running && ctl.manager == "enabled" {
			conn = "up"
		}
	}
	state := "disabled"
	if c.enabled {
		state = "enabled"
	}
	return reply{http.StatusOK, map[string]any{"state": state, "nmxc-conn": conn}}
}

// postClusterApp runs @stop or @start on an app; a completed @start after
// a @stop counts as a restart.
func (s *Switch) postClusterApp(q *nvueReq) reply {
	name := q.r.PathValue("app")
	a, bad := s.appLocked(name)
	if bad != nil {
		return *bad
	}
	_, stop := actionParams(q.body, "stop")
	_, start := actionParams(q.body, "start")
	if stop == start {
		return errReply(http.StatusBadRequest, "expected a @stop or @start action")
	}
	verb := "start"
	if stop {
		verb = "stop"
	}
	act := s.startActionLocked(q.now, appActionDuration, "App "+verb+" running", "App "+verb+" done", func(end time.Time) string {
		if !s.cluster.enabled {
			return "cluster is not enabled"
		}
		if stop {
			a.running = false
			return ""
		}
		s.startAppLocked(name, end)
		a.restarts++
		return ""
	})
	act.failMsg = s.takeFaultLocked(StepAppRestart)
	return actionAccepted(act)
}

func (s *Switch) getAppManager(q *nvueReq) reply {
	a, bad := s.appLocked(q.r.PathValue("app"))
	if bad != nil {
		return *bad
	}
	return reply{http.StatusOK, map[string]any{"state": a.manager}}
}

func (s *Switch) getAppManagerLeaf(q *nvueReq) reply {
	a, bad := s.appLocked(q.r.PathValue("app"))
	if bad != nil {
		return *bad
	}
	switch q.r.PathValue("leaf") {
	case "encryption":
		return reply{http.StatusOK, map[string]any{"encryption": a.encryption}}
	case "certificate":
		return reply{http.StatusOK, map[string]any{"cert-id": a.certID}}
	case "ca-certificate":
		return reply{http.StatusOK, map[string]any{"cacert-id": a.caID}}
	}
	return errReply(http.StatusNotFound, "no such manager setting "+q.r.PathValue("leaf"))
}

// postAppManagerLeaf runs @update on a manager setting: the certificate and
// CA certificate must be installed on the switch, encryption is mtls or
// none.
func (s *Switch) postAppManagerLeaf(q *nvueReq) reply {
	a, bad := s.appLocked(q.r.PathValue("app"))
	if bad != nil {
		return *bad
	}
	p, ok := actionParams(q.body, "update")
	if !ok {
		return errReply(http.StatusBadRequest, "expected an @update action")
	}
	leaf := q.r.PathValue("leaf")
	t := s.tlsLocked()
	var apply func() string
	switch leaf {
	case "certificate":
		id, _ := p["cert-id"].(string)
		apply = func() string {
			if _, ok := t.certs[id]; !ok {
				return "certificate " + id + " does not exist"
			}
			a.certID = id
			return ""
		}
	case "ca-certificate":
		id, _ := p["cacert-id"].(string)
		apply = func() string {
			if _, ok := t.caCerts[id]; !ok {
				return "ca-certificate " + id + " does not exist"
			}
			a.caID = id
			return ""
		}
	case "encryption":
		mode, _ := p["encryption"].(string)
		if mode != "mtls" && mode != "none" {
			return errReply(http.StatusBadRequest, "encryption must be mtls or none")
		}
		apply = func() string {
			if mode == "mtls" && (a.certID == "" || a.caID == "") {
				return "mtls needs a certificate and a ca-certificate"
			}
			a.encryption = mode
			return ""
		}
	default:
		return errReply(http.StatusNotFound, "no such manager setting "+leaf)
	}
	act := s.startActionLocked(q.now, appActionDuration, "Updating manager "+leaf, "Manager "+leaf+" updated",
		func(time.Time) string { return apply() })
	act.failMsg = s.takeFaultLocked(StepMTLS)
	if act.failMsg == "" && leaf == "encryption" {
		act.failMsg = s.takeFaultLocked(StepEncryptionUpdate)
	}
	return actionAccepted(act)
}

// nodeIPLocked points at the applied address of a node interface.
func (s *Switch) nodeIPLocked(iface string) *string {
	c := s.fabricLocked()
	switch iface {
	case "primary":
		return &c.primary
	case "secondary":
		return &c.second
	}
	return nil
}

// getNodeServer answers the applied addresses ({"<ip>":{}}); an interface
// without one is 404. Other revisions than "applied" show what they stage
// over the applied state.
func (s *Switch) getNodeServer(q *nvueReq) reply {
	iface := q.r.PathValue("iface")
	ip := s.nodeIPLocked(iface)
	if ip == nil {
		return errReply(http.StatusNotFound, "no such cluster node "+iface)
	}
	v := *ip
	if rev := q.r.URL.Query().Get("rev"); rev != "" && rev != "applied" {
		if r, ok := s.revisions[rev]; ok {
			if staged, ok := r.nodes[iface]; ok {
				v = staged
			}
		}
	}
	if v == "" {
		return errReply(http.StatusNotFound, "cluster node "+iface+" has no server")
	}
	return reply{http.StatusOK, map[string]any{v: map[string]any{}}}
}

// patchNodeServer stages {"<ip>":{}} as an interface's address.
func (s *Switch) patchNodeServer(q *nvueReq) reply {
	r, bad := s.pendingRevisionLocked(q)
	if bad != nil {
		return *bad
	}
	iface := q.r.PathValue("iface")
	if s.nodeIPLocked(iface) == nil {
		return errReply(http.StatusNotFound, "no such cluster node "+iface)
	}
	if len(q.body) != 1 {
		return errReply(http.StatusBadRequest, `expected one address: {"<ip>":{}}`)
	}
	for ip := range q.body {
		if !validIPv4(ip) {
			return errReply(http.StatusBadRequest, "not an IPv4 address: "+ip)
		}
		r.nodes[iface] = ip
	}
	return reply{http.StatusOK, map[string]any{}}
}

// deleteNode stages clearing an interface's settings.
func (s *Switch) deleteNode(q *nvueReq) reply {
	r, bad := s.pendingRevisionLocked(q)
	if bad != nil {
		return *bad
	}
	iface := q.r.PathValue("iface")
	if s.nodeIPLocked(iface) == nil {
		return errReply(http.StatusNotFound, "no such cluster node "+iface)
	}
	r.nodes[iface] = ""
	return reply{status: http.StatusNoContent}
}

// applyNodesLocked applies the node addresses staged in r; it reports
// whether anything changed.
func (s *Switch) applyNodesLocked(r *revision) bool {
	changed := false
	for iface, ip := range r.nodes {
		p := s.nodeIPLocked(iface)
		if *p != ip {
			*p, changed = ip, true
		}
	}
	return changed
}

func validIPv4(s string) bool {
	n, dots, digits := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
			digits++
			if n > 255 || digits > 3 {
				return false
			}
		case c == '.' && digits > 0:
			dots++
			n, digits = 0, 0
		default:
			return false
		}
	}
	return dots == 3 && digits > 0
}
