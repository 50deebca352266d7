package rmsserver

import (
	"maps"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// Secure mode end to end: the primary-to-be's NMX-C is bound to mTLS by
// ConfigureSwitchCertificate; the reconcile keeps the binding and speaks
// to NMX-C (Hello, the static config) over rmsd's outbound identity from
// client_tls_root, which the bound controller demands; a second run
// changes nothing.
func TestFabricReconcileSecureModeKeepsTheMTLSBinding(t *testing.T) {
	m := startMTLSFabricRack(t)
	r := m.secure
	primary := m.node(t, r.lowestSlot(t))
	bound := m.bindManager(t, primary)

	st := fabricStatus(t, r.reconcile(t, r.fabricRequest(testTopology)))
	if got := enabledSwitches(st); len(got) != 1 || got[0] != primary.ID {
		t.Fatalf("enabled switches %v, want [%s]", got, primary.ID)
	}
	if got := m.binding(primary); got != bound {
		t.Errorf("NMX-C binding %+v after the reconcile, was %+v", got, bound)
	}
	host := r.host(primary.ID)
	if v, _ := host.StaticConfig(fabric.FileFM, fabric.KeyTopology); v != testTopology {
		t.Errorf("topology %q: the reconcile did not reach NMX-C", v)
	}
	if got := host.ControlPlane(); got != fabric.PlaneConfigured {
		t.Errorf("control plane %q", got)
	}
	// The controller the reconcile set up through answers only rmsd's
	// identity.
	if err := m.hello(t, primary, m.withoutIdentity()); err == nil || !strings.Contains(err.Error(), "requires mTLS") {
		t.Errorf("NMX-C hello over TLS without a client certificate: %v, want refused", err)
	}
	if err := m.hello(t, primary, nil); err == nil {
		t.Error("NMX-C answered a plaintext hello while bound to mTLS")
	}
	if err := m.hello(t, primary, m.outbound); err != nil {
		t.Errorf("NMX-C hello over mTLS: %v", err)
	}

	restarts, saves, states := host.AppRestarts(fabric.AppController), r.saves(), r.states()
	js := r.reconcile(t, r.fabricRequest(testTopology))
	fabricStatus(t, js)
	if js.GetStateDescription() != "Scale-up fabric reconciled: no change needed" {
		t.Errorf("second run: description %q", js.GetStateDescription())
	}
	if got := host.AppRestarts(fabric.AppController); got != restarts {
		t.Errorf("the second run restarted NMX-C (%d → %d)", restarts, got)
	}
	if got := r.saves(); !maps.Equal(got, saves) {
		t.Errorf("the second run saved switch configs: %v → %v", saves, got)
	}
	if !maps.Equal(r.states(), states) {
		t.Errorf("the second run moved the switches")
	}
	if got := m.binding(primary); got != bound {
		t.Errorf("NMX-C binding %+v after the second run, was %+v", got, bound)
	}
	m.admin.assertNeverShown(t, "PRIVATE KEY")
}

// insecure_switch end to end: a rack whose primary's NMX-C is bound to
// mTLS (provisioned by a secure rmsd) is reconciled by rmsd with
// insecure_switch: the binding is unset and NMX-C answers plaintext.
func TestFabricReconcileInsecureSwitchUnsetsTheMTLSBinding(t *testing.T) {
	m := startMTLSFabricRack(t)
	r := m.insecure
	primary := m.node(t, r.lowestSlot(t))
	m.bindManager(t, primary)
	if err := m.hello(t, primary, nil); err == nil {
		t.Fatal("NMX-C answered a plaintext hello while bound to mTLS")
	}

	st := fabricStatus(t, r.reconcile(t, r.fabricRequest(testTopology)))
	if got := enabledSwitches(st); len(got) != 1 || got[0] != primary.ID {
		t.Fatalf("enabled switches %v, want [%s]", got, primary.ID)
	}
	if got := m.binding(primary); got.Encryption != "none" {
		t.Errorf("NMX-C binding %+v after the reconcile, want encryption none", got)
	}
	if err := m.hello(t, primary, nil); err != nil {
		t.Errorf("NMX-C hello in plaintext after the reconcile: %v", err)
	}
	host := r.host(primary.ID)
	if v, _ := host.StaticConfig(fabric.FileFM, fabric.KeyTopology); v != testTopology {
		t.Errorf("topology %q", v)
	}

	js := r.reconcile(t, r.fabricRequest(testTopology))
	fabricStatus(t, js)
	if js.GetStateDescription() != "Scale-up fabric reconciled: no change needed" {
		t.Errorf("second run: description %q", js.GetStateDescription())
	}
}

// A step after the binding step fails on a rack whose old primary is not
// the switch at the lowest slot and whose new primary's NMX-C is bound:
// the job fails and the binding is back as the snapshot saw it, in both
// modes (insecure_switch had unset it; secure mode had kept it).
func TestFabricReconcileRollbackRestoresTheMTLSBinding(t *testing.T) {
	for _, tc := range []struct {
		name     string
		insecure bool
		step     nvossim.FabricStep
		phase    string
	}{
		{"insecure_switch, static config fails after the unbinding", true, nvossim.StepStaticConfig, "reconciling the static configuration"},
		{"insecure_switch, NMX-C restart fails", true, nvossim.StepAppRestart, "restarting NMX-C"},
		{"secure, NMX-C restart fails", false, nvossim.StepAppRestart, "restarting NMX-C"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startMTLSFabricRack(t)
			r := m.secure
			if tc.insecure {
				r = m.insecure
			}
			primary := m.node(t, r.lowestSlot(t))
			bound := m.bindManager(t, primary)
			var old hw.Node
			for _, n := range r.switches() {
				if n.ID != primary.ID {
					old = n
					break
				}
			}
			oldHost := r.host(old.ID)
			oldHost.EnableCluster(true)
			oldHost.SetNodeIPs(old.Host.Host(), "10.99.0.1")
			before := r.states()
			r.host(primary.ID).FailNextFabricStep(tc.step, "injected "+string(tc.step)+" failure")

			js := r.reconcile(t, r.fabricRequest(otherTopology))
			if js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
				t.Fatalf("job %v: %s", js.GetExecutionState(), js.GetStateDescription())
			}
			msg := js.GetErrorMessage()
			if !strings.Contains(msg, "failed while "+tc.phase) || !strings.Contains(msg, "rolled back") {
				t.Errorf("message %q", msg)
			}
			if !strings.HasSuffix(js.GetStateDescription(), "switches restored") {
				t.Errorf("description %q", js.GetStateDescription())
			}
			if got := m.binding(primary); got != bound {
				t.Errorf("NMX-C binding %+v after the rollback, the snapshot saw %+v", got, bound)
			}
			if got := r.states(); !maps.Equal(got, before) {
				for id := range before {
					if got[id] != before[id] {
						t.Errorf("%s: %+v, was %+v", id, got[id], before[id])
					}
				}
			}
			// The restored binding is enforced again.
			if err := m.hello(t, primary, nil); err == nil {
				t.Error("NMX-C answered a plaintext hello after the binding was restored")
			}
			if err := m.hello(t, primary, m.outbound); err != nil {
				t.Errorf("NMX-C hello over mTLS after the rollback: %v", err)
			}
			m.admin.assertNeverShown(t, "PRIVATE KEY", js)
		})
	}
}

// Secure mode on a primary that was never provisioned (its NMX-C is not
// bound, so it does not present a certificate of the site CA): rmsd does
// not fall back to an unverified or plaintext NMX-C; the job fails at
// Hello, naming the certificate failure, and the switches are restored.
func TestFabricReconcileSecureModeRefusesAnUnprovisionedPrimary(t *testing.T) {
	m := startMTLSFabricRack(t)
	r := m.secure
	before := r.states()
	js := r.reconcile(t, r.fabricRequest(testTopology))
	msg := js.GetErrorMessage()
	if js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED ||
		!strings.Contains(msg, "failed while saying Hello to NMX-C") || !strings.Contains(msg, "certificate") ||
		!strings.Contains(msg, "rolled back") || !strings.Contains(msg, "bind it with ConfigureSwitchCertificate") {
		t.Fatalf("job %v: %s", js.GetExecutionState(), msg)
	}
	if got := r.states(); !maps.Equal(got, before) {
		t.Errorf("the switches were not restored: %v, were %v", got, before)
	}
}
