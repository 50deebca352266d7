package nvossim

import (
	"net/http"
	"strconv"
	"strings"
)

// noDiffIssue is NVOS's message when an applied revision changes nothing.
const noDiffIssue = "config apply executed with no config diff"

func (s *Switch) postRevision(q *nvueReq) reply {
	s.nextRevision++
	id := strconv.Itoa(s.nextRevision)
	s.revisions[id] = &revision{id: id, state: "pending", passwords: map[string]string{}, patches: map[string]any{}, nodes: map[string]string{}}
	return reply{http.StatusOK, map[string]any{id: map[string]any{"state": "pending"}}}
}

func (r *revision) view() map[string]any {
	issues := map[string]any{}
	if r.issue != "" {
		issues["0"] = map[string]any{"message": r.issue}
	}
	return map[string]any{"state": r.state, "transition": map[string]any{"issue": issues, "progress": ""}}
}

func (s *Switch) getRevision(q *nvueReq) reply {
	id := q.r.PathValue("rev")
	if id == "applied" {
		return reply{http.StatusOK, map[string]any{"state": "applied"}}
	}
	r, ok := s.revisions[id]
	if !ok {
		return errReply(http.StatusNotFound, "no such revision "+id)
	}
	return reply{http.StatusOK, r.view()}
}

// patchRevision handles {"state":"apply"} and {"state":"save"}.
func (s *Switch) patchRevision(q *nvueReq) reply {
	id := q.r.PathValue("rev")
	state, _ := q.body["state"].(string)
	if state == "save" {
		if r, ok := s.revisions[id]; id != "applied" && (!ok || r.state != "applied") {
			return errReply(http.StatusBadRequest, "revision "+id+" is not applied")
		}
		s.saves++
		return reply{http.StatusOK, map[string]any{"state": "saved"}}
	}
	r, ok := s.revisions[id]
	if !ok {
		return errReply(http.StatusNotFound, "no such revision "+id)
	}
	if state != "apply" {
		return errReply(http.StatusBadRequest, "unsupported revision state "+strconv.Quote(state))
	}
	if r.state != "pending" {
		return errReply(http.StatusConflict, "revision "+id+" is "+r.state)
	}
	r.state = "applying"
	r.applyEnd = q.now.Add(s.cfg.scale(s.cfg.ApplyDuration))
	r.applyFail = s.revisionFail
	if len(r.nodes) > 0 && r.applyFail == "" {
		r.applyFail = s.takeFaultLocked(StepNodeIPs)
	}
	return reply{http.StatusOK, r.view()}
}

// finishRevision applies a revision whose apply time has come.
func (s *Switch) finishRevision(r *revision) {
	switch {
	case r.applyFail != "":
		r.state, r.issue = "invalid", r.applyFail
	case len(r.passwords) == 0 && len(r.patches) == 0 && len(r.nodes) == 0:
		r.state, r.issue = "failed", noDiffIssue
	default:
		if issue := s.applyTLSPatchesLocked(r); issue != "" {
			r.state, r.issue = "invalid", issue
			return
		}
		if !s.applyNodesLocked(r) && len(r.passwords) == 0 && len(r.patches) == 0 {
			r.state, r.issue = "failed", noDiffIssue
			return
		}
		for name, pw := range r.passwords {
			s.users[name] = &user{password: pw}
		}
		r.state = "applied"
	}
}

func (s *Switch) deleteRevision(q *nvueReq) reply {
	id := q.r.PathValue("rev")
	if _, ok := s.revisions[id]; !ok {
		return errReply(http.StatusNotFound, "no such revision "+id)
	}
	delete(s.revisions, id)
	return reply{status: http.StatusNoContent}
}

// pendingRevisionLocked returns the pending revision named by ?rev=.
func (s *Switch) pendingRevisionLocked(q *nvueReq) (*revision, *reply) {
	id := q.r.URL.Query().Get("rev")
	r, ok := s.revisions[id]
	if !ok {
		rep := errReply(http.StatusBadRequest, "a pending revision (?rev=) is required")
		return nil, &rep
	}
	if r.state != "pending" {
		rep := errReply(http.StatusConflict, "revision "+id+" is "+r.state)
		return nil, &rep
	}
	return r, nil
}

func (s *Switch) getUser(q *nvueReq) reply {
	if _, ok := s.users[q.r.PathValue("user")]; !ok {
		return errReply(http.StatusNotFound, "no such user")
	}
	return reply{http.StatusOK, map[string]any{"role": "system-admin", "state": "enabled"}}
}

// patchUser stages a password change ({"password": base64}) in a revision.
func (s *Switch) patchUser(q *nvueReq) reply {
	r, bad := s.pendingRevisionLocked(q)
	if bad != nil {
		return *bad
	}
	name := q.r.PathValue("user")
	if name == "" || strings.IndexFunc(name, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}) >= 0 {
		return errReply(http.StatusBadRequest, "invalid user name")
	}
	pw, ok := decodePassword(q.body["password"])
	if !ok {
		return errReply(http.StatusBadRequest, "password must be a non-empty base64 string")
	}
	r.passwords[name] = pw
	return reply{http.StatusOK, map[string]any{}}
}

// patchGeneric stages any other configuration change; it is kept but has
// no simulated effect.
func (s *Switch) patchGeneric(q *nvueReq) reply {
	r, bad := s.pendingRevisionLocked(q)
	if bad != nil {
		return *bad
	}
	r.patches[q.r.URL.Path] = q.body
	return reply{http.StatusOK, map[string]any{}}
}
