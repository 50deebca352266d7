package nvossim

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// nvueReq is one authenticated NVUE request, handled with Switch.mu held.
type nvueReq struct {
	r    *http.Request
	body map[string]any
	now  time.Time
	user string
}

// reply is a JSON response: status and body (nil body → no content).
type reply struct {
	status int
	body   any
}

type nvueFunc func(q *nvueReq) reply

func errReply(status int, detail string) reply {
	return reply{status, map[string]any{"status": status, "title": http.StatusText(status), "detail": detail}}
}

// nvueHandler routes the NVUE REST API.
func (s *Switch) nvueHandler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, f nvueFunc) { mux.Handle(pattern, s.wrap(f)) }
	route("GET /nvue_v1/system", s.getSystem)
	route("POST /nvue_v1/system", s.postSystem)
	route("GET /nvue_v1/platform", s.getPlatform)
	route("GET /nvue_v1/platform/chassis-location", s.getChassisLocation)
	route("GET /nvue_v1/platform/firmware", s.getFirmware)
	route("GET /nvue_v1/platform/firmware/{comp}", s.getFirmwareComponent)
	route("GET /nvue_v1/platform/firmware/{comp}/files", s.getFirmwareFiles)
	route("POST /nvue_v1/platform/firmware/{comp}/files/{name}", s.postFirmwareInstall)
	route("GET /nvue_v1/action/{id}", s.getAction)
	route("GET /nvue_v1/system/image", s.getImage)
	route("POST /nvue_v1/system/image", s.postImageUninstall)
	route("GET /nvue_v1/system/image/files", s.getImageFiles)
	route("POST /nvue_v1/system/image/files/{file}", s.postImageInstall)
	route("POST /nvue_v1/system/factory-default", s.postFactoryReset)
	route("POST /nvue_v1/sdn/factory-default", s.postSDNFactoryReset)
	s.fabricRoutes(route)
	route("POST /nvue_v1/revision", s.postRevision)
	route("GET /nvue_v1/revision/{rev}", s.getRevision)
	route("PATCH /nvue_v1/revision/{rev}", s.patchRevision)
	route("DELETE /nvue_v1/revision/{rev}", s.deleteRevision)
	route("GET /nvue_v1/system/aaa/user/{user}", s.getUser)
	route("PATCH /nvue_v1/system/aaa/user/{user}", s.patchUser)
	route("GET /nvue_v1/system/security/spdm", s.getSpdm)
	route("POST /nvue_v1/system/security/spdm/{comp}", s.postSpdmGenerate)
	route("GET /nvue_v1/system/security/spdm/{comp}/measurements", s.getSpdmMeasurements)
	route("GET /nvue_v1/system/security/spdm/{comp}/certificates", s.getSpdmCertificates)
	s.tlsRoutes(route)
	route("PATCH /nvue_v1/", s.patchGeneric)
	route("/", func(q *nvueReq) reply { return errReply(http.StatusNotFound, "no such resource "+q.r.URL.Path) })
	return mux
}

// wrap adds what every NVUE call shares: dropping connections during
// outages, the JSON body, Basic authentication and the JSON reply.
func (s *Switch) wrap(f nvueFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{}
		raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err == nil && len(strings.TrimSpace(string(raw))) > 0 {
			if jerr := json.Unmarshal(raw, &body); jerr != nil {
				writeJSON(w, errReply(http.StatusBadRequest, "request body is not a JSON object"))
				return
			}
		}
		s.mu.Lock()
		now := s.now()
		s.advanceLocked(now)
		if s.downLocked(now) || s.onie { // no NVOS, no NVUE
			s.mu.Unlock()
			dropConnection(w)
			return
		}
		s.nvueRequests++
		name, res := s.authLocked(r)
		var rep reply
		switch res {
		case authOK:
			rep = f(&nvueReq{r: r, body: body, now: now, user: name})
		case authExpired:
			rep = errReply(http.StatusUnauthorized, "password expired for user "+name+"; change it on a console login")
		default:
			rep = errReply(http.StatusUnauthorized, "invalid credentials")
		}
		delay := s.responseDelay
		s.mu.Unlock()
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				// The caller gave up: it gets no answer. Returning would
				// send an empty 200, which a client whose cancellation
				// races the answer can still read as a success.
				t.Stop()
				dropConnection(w)
				return
			case <-s.done:
				t.Stop()
				dropConnection(w)
				return
			}
		}
		s.log.Debug().Str("method", r.Method).Str("path", r.URL.Path).Int("status", rep.status).Msg("nvue request")
		writeJSON(w, rep)
	})
}

// dropConnection closes the client's connection without a response, as a
// rebooting switch does.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

type authResult int

const (
	authFailed authResult = iota
	authOK
	authExpired
)

// authLocked checks the request's Basic credentials.
func (s *Switch) authLocked(r *http.Request) (string, authResult) {
	name, pw, ok := r.BasicAuth()
	if !ok || s.rejectLogins {
		return name, authFailed
	}
	return name, s.checkPasswordLocked(name, pw)
}

func (s *Switch) checkPasswordLocked(name, pw string) authResult {
	u, ok := s.users[name]
	if !ok || u.password != pw {
		return authFailed
	}
	if u.expired {
		return authExpired
	}
	return authOK
}

func writeJSON(w http.ResponseWriter, rep reply) {
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	b, err := json.Marshal(rep.body)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_, _ = w.Write(b)
}

// actionParams extracts {"@verb":{"state":"start","parameters":{...}}}.
func actionParams(body map[string]any, verb string) (map[string]any, bool) {
	a, ok := body["@"+verb].(map[string]any)
	if !ok || a["state"] != "start" {
		return nil, false
	}
	p, _ := a["parameters"].(map[string]any)
	return p, true
}

func actionAccepted(a *action) reply { return reply{http.StatusAccepted, a.id} }

func (s *Switch) getSystem(q *nvueReq) reply {
	return reply{http.StatusOK, map[string]any{
		"hostname":     s.cfg.HostName,
		"build":        "NVOS " + strings.TrimPrefix(s.partitionBuild(s.current), "nvos-"),
		"product-name": "NVOS",
		"platform":     s.cfg.ProductName,
		"status":       "System is ready",
	}}
}

// postSystem handles the @power-cycle action: the switch goes down after
// RebootDelay and comes back with staged firmware active.
func (s *Switch) postSystem(q *nvueReq) reply {
	if _, ok := actionParams(q.body, "power-cycle"); !ok {
		return errReply(http.StatusBadRequest, "expected a @power-cycle action")
	}
	a := s.startActionLocked(q.now, 0, "Power cycle scheduled", "Power cycle started, system is offline during reboot",
		func(end time.Time) string {
			s.rebootLocked(end.Add(s.cfg.scale(s.cfg.RebootDelay)), s.activateFirmwareLocked)
			return ""
		})
	a.failMsg = "" // a power cycle is not a firmware action; the fault does not apply
	return actionAccepted(a)
}

func (s *Switch) activateFirmwareLocked() {
	for _, c := range s.firmware {
		c.actual = c.installed
	}
}

func (s *Switch) getPlatform(q *nvueReq) reply {
	return reply{http.StatusOK, map[string]any{
		"product-name":  s.cfg.ProductName,
		"part-number":   s.cfg.PartNumber,
		"serial-number": s.cfg.SerialNumber,
		"manufacturer":  "NVIDIA",
	}}
}

func (s *Switch) getChassisLocation(q *nvueReq) reply {
	loc := map[string]any{
		"chassis-sn":  s.cfg.ChassisSerial,
		"slot-number": s.cfg.SlotNumber,
		"topology-id": s.cfg.TopologyID,
		"tray-index":  s.cfg.TrayIndex,
	}
	for key, raw := range s.location {
		if len(raw) == 0 {
			delete(loc, key)
		} else {
			loc[key] = raw
		}
	}
	return reply{http.StatusOK, loc}
}

func (c *component) view() map[string]any {
	return map[string]any{"actual-firmware": c.actual, "installed-firmware": c.installed}
}

func (s *Switch) getFirmware(q *nvueReq) reply {
	out := map[string]any{}
	for name, c := range s.firmware {
		out[name] = c.view()
	}
	return reply{http.StatusOK, out}
}

// componentLocked resolves a component name case-insensitively; "cpld"
// means CPLD1.
func (s *Switch) componentLocked(name string) (string, *component) {
	up := strings.ToUpper(name)
	if up == "CPLD" {
		up = ComponentCPLD1
	}
	return up, s.firmware[up]
}

func (s *Switch) getFirmwareComponent(q *nvueReq) reply {
	_, c := s.componentLocked(q.r.PathValue("comp"))
	if c == nil {
		return errReply(http.StatusNotFound, "unknown firmware component "+q.r.PathValue("comp"))
	}
	return reply{http.StatusOK, c.view()}
}

func (s *Switch) getFirmwareFiles(q *nvueReq) reply {
	name, c := s.componentLocked(q.r.PathValue("comp"))
	if c == nil {
		return errReply(http.StatusNotFound, "unknown firmware component "+q.r.PathValue("comp"))
	}
	return reply{http.StatusOK, s.fileListingLocked(fwDir(name))}
}

func (s *Switch) fileListingLocked(dir string) map[string]any {
	out := map[string]any{}
	for _, fi := range s.fs.list(dir) {
		if !fi.IsDir() {
			out[fi.Name()] = map[string]any{"path": dir + "/" + fi.Name(), "size": fi.Size()}
		}
	}
	return out
}

// postFirmwareInstall installs a staged file: after ActionDuration the
// component's installed version is the file's; a power cycle activates it
// (or the reboot the install hands off to, see RebootInstalls).
func (s *Switch) postFirmwareInstall(q *nvueReq) reply {
	name, c := s.componentLocked(q.r.PathValue("comp"))
	if c == nil {
		return errReply(http.StatusNotFound, "unknown firmware component "+q.r.PathValue("comp"))
	}
	if _, ok := actionParams(q.body, "install"); !ok {
		return errReply(http.StatusBadRequest, "expected an @install action")
	}
	file := q.r.PathValue("name")
	path := fwDir(name) + "/" + file
	if !s.fs.isFile(path) {
		return errReply(http.StatusNotFound, "firmware file "+path+" not found")
	}
	done, reboot := "Firmware install complete; power cycle the system to activate", s.rebootInstalls
	if reboot {
		done = "Firmware install complete, system is offline during reboot"
	}
	a := s.startActionLocked(q.now, s.cfg.ActionDuration, "Installing firmware "+file, done,
		func(end time.Time) string {
			if !s.fs.isFile(path) {
				return "firmware file " + path + " disappeared during install"
			}
			c.installed = s.fs.packageVersion(path)
			if reboot {
				s.rebootLocked(end.Add(s.cfg.scale(s.cfg.RebootDelay)), s.activateFirmwareLocked)
			}
			return ""
		})
	return actionAccepted(a)
}

func (s *Switch) getAction(q *nvueReq) reply {
	id, err := strconv.Atoi(q.r.PathValue("id"))
	a, ok := s.actions[id]
	if err != nil || !ok {
		return errReply(http.StatusNotFound, "no such action "+q.r.PathValue("id"))
	}
	view := a.view(q.now)
	if a.finished {
		s.startDeferredRebootsLocked(q.now)
	}
	return reply{http.StatusOK, view}
}

// decodePassword accepts the base64 form RMS sends.
func decodePassword(v any) (string, bool) {
	str, ok := v.(string)
	if !ok || str == "" {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(str)
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}
