package rmsserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/spdm"
)

// startSpdmRack starts a simulated rack whose SPDM polls run every 5 ms,
// with a batch deadline of deadline (0: the default).
func startSpdmRack(t *testing.T, deadline time.Duration) *simRack {
	t.Helper()
	return startSimRackDeps(t, sim.Options{TimeScale: 0.001}, func(d *Deps) {
		d.SpdmTiming = spdm.Timing{Deadline: deadline, PollInterval: 5 * time.Millisecond}
	})
}

// newNonce returns 32 random bytes.
func newNonce(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, spdm.NonceSize)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// collectSpdm sends the batch request.
func (s *simRack) collectSpdm(t *testing.T, nonce []byte, nodes ...hw.Node) *rmspb.BatchCollectSwitchSpdmAttestationEvidenceResponse {
	t.Helper()
	resp, err := s.client.BatchCollectSwitchSpdmAttestationEvidence(context.Background(),
		&rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest{Targets: nodeSet(nodes...).GetNodes(), Nonce: nonce})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// checkEvidence checks a component that succeeded: its measurements are
// normalised JSON bound to nonce, and it has a certificate chain.
func checkEvidence(t *testing.T, node string, c *rmspb.SwitchSpdmComponentResult, nonce []byte) {
	t.Helper()
	if c.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || c.GetErrorMessage() != "" {
		t.Fatalf("%s/%s: %v %q, want SUCCESS", node, c.GetComponentId(), c.GetStatus(), c.GetErrorMessage())
	}
	var m struct {
		Nonce string `json:"nonce"`
	}
	ev := c.GetEvidence()
	if err := json.Unmarshal(ev.GetMeasurements(), &m); err != nil || m.Nonce != hex.EncodeToString(nonce) {
		t.Fatalf("%s/%s: measurements %s do not carry the nonce (%v)", node, c.GetComponentId(), ev.GetMeasurements(), err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ev.GetMeasurements()); err != nil || !bytes.Equal(compact.Bytes(), ev.GetMeasurements()) {
		t.Fatalf("%s/%s: measurements are not compact JSON: %s", node, c.GetComponentId(), ev.GetMeasurements())
	}
	if !bytes.Contains(ev.GetCertificateChain(), []byte("BEGIN CERTIFICATE")) || !json.Valid(ev.GetCertificateChain()) {
		t.Fatalf("%s/%s: certificate chain %s", node, c.GetComponentId(), ev.GetCertificateChain())
	}
}

// componentIDs lists a result's component ids.
func componentIDs(r *rmspb.SwitchSpdmAttestationTargetResult) []string {
	var ids []string
	for _, c := range r.GetComponents() {
		ids = append(ids, c.GetComponentId())
	}
	return ids
}

// Every component of several switches is challenged with the caller's
// nonce; a second batch with another nonce gets evidence bound to it.
func TestSpdmCollectsEvidenceFromSwitches(t *testing.T) {
	s := startSpdmRack(t, 0)
	switches := s.ofKind(hw.KindSwitch)[:3]
	for round := 0; round < 2; round++ {
		nonce := newNonce(t)
		resp := s.collectSpdm(t, nonce, switches...)
		if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetMessage() != "SPDM evidence collected from 3/3 switches" {
			t.Fatalf("reply %v %q", resp.GetStatus(), resp.GetMessage())
		}
		for i, r := range resp.GetResults() {
			if r.GetNodeId() != switches[i].ID || r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.ErrorMessage != nil ||
				r.GetCollectionTimestamp() == nil {
				t.Fatalf("result %d: %v", i, r)
			}
			if !slices.Equal(componentIDs(r), nvossim.SpdmComponents) {
				t.Fatalf("%s: components %v, want %v", r.GetNodeId(), componentIDs(r), nvossim.SpdmComponents)
			}
			for _, c := range r.GetComponents() {
				checkEvidence(t, r.GetNodeId(), c, nonce)
			}
		}
	}
}

// A component whose generation fails keeps its own error, the others their
// evidence; its switch fails, the other switch does not, the batch fails.
func TestSpdmFailingComponentFailsItsSwitchOnly(t *testing.T) {
	s := startSpdmRack(t, 0)
	sw := s.ofKind(hw.KindSwitch)
	s.nvos(t, sw[0].ID).FailSpdmComponent(nvossim.SpdmERoT, "ERoT did not answer the challenge")
	nonce := newNonce(t)
	resp := s.collectSpdm(t, nonce, sw[0], sw[1])
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		!strings.HasPrefix(resp.GetMessage(), "SPDM evidence collected from 1/2 switches; failed: node_id="+sw[0].ID+": 1 of 3 SPDM components failed") {
		t.Fatalf("reply %v %q", resp.GetStatus(), resp.GetMessage())
	}
	bad, good := resp.GetResults()[0], resp.GetResults()[1]
	if bad.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || bad.GetErrorMessage() != "1 of 3 SPDM components failed" {
		t.Fatalf("failed switch: %v", bad)
	}
	for _, c := range bad.GetComponents() {
		if c.GetComponentId() != nvossim.SpdmERoT {
			checkEvidence(t, bad.GetNodeId(), c, nonce)
			continue
		}
		if c.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || c.GetEvidence() != nil ||
			!strings.Contains(c.GetErrorMessage(), "ERoT did not answer the challenge") {
			t.Fatalf("failed component: %v", c)
		}
	}
	if good.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(good.GetComponents()) != 3 {
		t.Fatalf("other switch: %v", good)
	}
}

// When the batch deadline passes during a component's generation, the
// evidence already collected stays, that component and the ones after it
// time out, and a switch that had finished is untouched.
func TestSpdmBatchDeadlineKeepsCompletedEvidence(t *testing.T) {
	s := startSpdmRack(t, 3*time.Second)
	sw := s.ofKind(hw.KindSwitch)
	s.nvos(t, sw[0].ID).SlowSpdmGeneration(nvossim.SpdmERoT, time.Hour)
	nonce := newNonce(t)
	resp := s.collectSpdm(t, nonce, sw[0], sw[1])
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("reply %v %q", resp.GetStatus(), resp.GetMessage())
	}
	late, done := resp.GetResults()[0], resp.GetResults()[1]
	if done.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("finished switch: %v", done)
	}
	if late.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || late.GetErrorMessage() != "2 of 3 SPDM components failed" {
		t.Fatalf("late switch: %v", late)
	}
	want := map[string]string{
		nvossim.SpdmERoT:     "interrupted: spdm: batch deadline reached",
		nvossim.SpdmNVSwitch: "not attempted: spdm: batch deadline reached",
	}
	for _, c := range late.GetComponents() {
		if c.GetComponentId() == nvossim.SpdmBMC {
			checkEvidence(t, late.GetNodeId(), c, nonce)
			continue
		}
		if c.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || c.GetErrorMessage() != want[c.GetComponentId()] || c.GetEvidence() != nil {
			t.Fatalf("component cut short: %v", c)
		}
	}
}

// A compute tray fails on its own, without I/O; the switch beside it
// succeeds.
func TestSpdmNonSwitchTargetFailsAlone(t *testing.T) {
	s := startSpdmRack(t, 0)
	compute, sw := s.ofKind(hw.KindCompute)[0], s.ofKind(hw.KindSwitch)[0]
	resp := s.collectSpdm(t, newNonce(t), compute, sw)
	r := resp.GetResults()
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(r) != 2 ||
		r[1].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("reply %v %q %v", resp.GetStatus(), resp.GetMessage(), r)
	}
	if !strings.HasPrefix(r[0].GetErrorMessage(), "SPDM evidence is collected from switch trays only") || len(r[0].GetComponents()) != 0 {
		t.Fatalf("compute tray: %v", r[0])
	}
	if got := s.device(t, compute.ID).Requests(); got != 0 {
		t.Fatalf("compute BMC got %d requests, want none", got)
	}
}
