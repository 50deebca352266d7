package nvossim

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"
)

// The SPDM attestation resources of a simulated switch: three components
// (the switch BMC, its ERoT and the NVSwitch), each generating evidence
// bound to the nonce of its last @generate. The measurements and the
// certificate chain are derived from the switch's host name, the
// component and that nonce, so a test can tell fresh evidence from stale.

// The simulated SPDM component ids, in the order NVUE lists them.
const (
	SpdmBMC      = "BMC_0"
	SpdmERoT     = "ERoT_BMC_0"
	SpdmNVSwitch = "NVSwitch_0"
)

// SpdmComponents are the simulated SPDM component ids, sorted.
var SpdmComponents = []string{SpdmBMC, SpdmERoT, SpdmNVSwitch}

// spdmGenerateDuration is how long an @generate runs (simulated time).
const spdmGenerateDuration = 2 * time.Second

// spdmState is the SPDM side of a switch: the nonce of each component's
// last generated evidence, and the fault knobs (spdm_faults.go).
type spdmState struct {
	nonces  map[string]string        // component -> hex nonce of its evidence
	failing map[string]string        // component -> issue its @generate ends with
	slow    map[string]time.Duration // component -> wall-clock @generate length
}

// isSpdmComponent reports whether id is a simulated SPDM component.
func isSpdmComponent(id string) bool {
	for _, c := range SpdmComponents {
		if c == id {
			return true
		}
	}
	return false
}

func (s *Switch) getSpdm(q *nvueReq) reply {
	out := map[string]any{}
	for _, id := range SpdmComponents {
		out[id] = map[string]any{"enabled": "on"}
	}
	return reply{http.StatusOK, out}
}

// postSpdmGenerate starts @generate on a component: after a short action
// (or the SlowSpdmGeneration window) its evidence is bound to the nonce,
// unless FailSpdmComponent made it fail.
func (s *Switch) postSpdmGenerate(q *nvueReq) reply {
	id := q.r.PathValue("comp")
	if !isSpdmComponent(id) {
		return errReply(http.StatusNotFound, "unknown SPDM component "+id)
	}
	p, ok := actionParams(q.body, "generate")
	if !ok {
		return errReply(http.StatusBadRequest, "expected a @generate action")
	}
	nonce, _ := p["nonce"].(string)
	if b, err := hex.DecodeString(nonce); err != nil || len(b) != 32 {
		return errReply(http.StatusBadRequest, "nonce must be 32 hex-encoded bytes")
	}
	fail := s.spdm.failing[id]
	a := s.startActionLocked(q.now, spdmGenerateDuration, "Generating SPDM evidence", "SPDM evidence generated",
		func(time.Time) string {
			if fail != "" {
				return fail
			}
			if s.spdm.nonces == nil {
				s.spdm.nonces = map[string]string{}
			}
			s.spdm.nonces[id] = nonce
			return ""
		})
	if d := s.spdm.slow[id]; d > 0 {
		a.end = q.now.Add(d)
	}
	return actionAccepted(a)
}

// spdmEvidenceLocked returns the nonce a component's evidence is bound
// to, or a 404 reply when it has none.
func (s *Switch) spdmEvidenceLocked(q *nvueReq) (string, string, *reply) {
	id := q.r.PathValue("comp")
	if !isSpdmComponent(id) {
		r := errReply(http.StatusNotFound, "unknown SPDM component "+id)
		return "", "", &r
	}
	nonce, ok := s.spdm.nonces[id]
	if !ok {
		r := errReply(http.StatusNotFound, "no SPDM evidence generated for "+id)
		return "", "", &r
	}
	return id, nonce, nil
}

// spdmDigest is the digest the measurements of component carry for nonce
// (hex) on the switch named hostName.
func spdmDigest(hostName, component, nonce string) string {
	sum := sha256.Sum256([]byte(hostName + "|" + component + "|" + nonce))
	return hex.EncodeToString(sum[:])
}

func (s *Switch) getSpdmMeasurements(q *nvueReq) reply {
	id, nonce, errRep := s.spdmEvidenceLocked(q)
	if errRep != nil {
		return *errRep
	}
	return reply{http.StatusOK, map[string]any{
		"nonce":     nonce,
		"algorithm": "TPM_ALG_SHA_384",
		"digest":    spdmDigest(s.cfg.HostName, id, nonce),
		"signed-measurements": base64.StdEncoding.EncodeToString(
			[]byte("spdm-measurements:" + s.cfg.HostName + ":" + id + ":" + nonce)),
	}}
}

func (s *Switch) getSpdmCertificates(q *nvueReq) reply {
	id, nonce, errRep := s.spdmEvidenceLocked(q)
	if errRep != nil {
		return *errRep
	}
	leaf := base64.StdEncoding.EncodeToString([]byte("leaf:" + s.cfg.HostName + ":" + id + ":" + nonce))
	return reply{http.StatusOK, map[string]any{
		"slot": 0,
		"certificate-chain": []string{
			"-----BEGIN CERTIFICATE-----\n" + leaf + "\n-----END CERTIFICATE-----",
			"-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString([]byte("root:nvidia")) + "\n-----END CERTIFICATE-----",
		},
	}}
}
