package nvue_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// One component's evidence, generated against a simulated switch: the
// generation is followed to action_success and the documents carry the
// nonce; a failing component ends in an *ActionError.
func TestSpdmEvidenceRoundTrip(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	ids, err := r.nv.SpdmComponents(r.ctx)
	if err != nil || !slices.Equal(ids, nvossim.SpdmComponents) {
		t.Fatalf("components %v, %v", ids, err)
	}
	nonce := bytes.Repeat([]byte{0xab}, 32)
	id, err := r.nv.GenerateSpdmEvidence(r.ctx, nvossim.SpdmBMC, nonce)
	if err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		if done, err = r.nv.SpdmGenerationDone(r.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	m, err := r.nv.SpdmMeasurements(r.ctx, nvossim.SpdmBMC)
	if err != nil || !bytes.Contains(m, []byte(`"nonce":"`+hex.EncodeToString(nonce)+`"`)) {
		t.Fatalf("measurements %s, %v", m, err)
	}
	if c, err := r.nv.SpdmCertificates(r.ctx, nvossim.SpdmBMC); err != nil || !bytes.Contains(c, []byte("BEGIN CERTIFICATE")) {
		t.Fatalf("certificates %s, %v", c, err)
	}

	r.sw.FailSpdmComponent(nvossim.SpdmERoT, "no answer")
	id, err = r.nv.GenerateSpdmEvidence(r.ctx, nvossim.SpdmERoT, nonce)
	if err != nil {
		t.Fatal(err)
	}
	for {
		done, err := r.nv.SpdmGenerationDone(r.ctx, id)
		if err != nil {
			if !errors.Is(err, nvue.ErrActionFailed) || !strings.Contains(err.Error(), "no answer") {
				t.Fatalf("failed generation: %v", err)
			}
			break
		}
		if done {
			t.Fatal("a failing component succeeded")
		}
	}
	if _, err := r.nv.SpdmMeasurements(r.ctx, nvossim.SpdmERoT); !errors.Is(err, nvue.ErrNotFound) {
		t.Fatalf("measurements never generated: %v", err)
	}
}

func TestNormaliseJSON(t *testing.T) {
	got, err := nvue.NormaliseJSON([]byte(" {\"b\": [1.50, \"<x>\"],\n \"a\": {\"z\": null, \"y\": 12345678901234567890}} "))
	if want := `{"a":{"y":12345678901234567890,"z":null},"b":[1.50,"<x>"]}`; err != nil || string(got) != want {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
	for _, bad := range []string{``, `{`, `{} {}`, `{}]`, `nope`} {
		if got, err := nvue.NormaliseJSON([]byte(bad)); err == nil {
			t.Errorf("NormaliseJSON(%q) = %s, want an error", bad, got)
		}
	}
}
