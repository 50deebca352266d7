package rmsserver

import (
	"crypto/tls"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/switchcert"
)

// The private key line of these tests: unique, so that finding it
// anywhere proves a leak.
const secretKeyLine = "UniqueKeyMaterial-Xk9q-7731-NeverLogThis"

// writeMaterial writes a domain's material under a new cert root.
func writeMaterial(t *testing.T, domain string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, domain)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"ca.pem":     "-----BEGIN CERTIFICATE-----\nQ0EgY2VydA==\n-----END CERTIFICATE-----\n",
		"client.pem": "-----BEGIN CERTIFICATE-----\nc3dpdGNoIGNlcnQ=\n-----END CERTIFICATE-----\n",
		"client.key": "-----BEGIN PRIVATE KEY-----\n" + secretKeyLine + "\n-----END PRIVATE KEY-----\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// startCertRack is an admin rack whose switch certificate RPCs use cfg,
// with fast pacing.
func startCertRack(t *testing.T, cfg SwitchCertConfig) *adminRack {
	cfg.Pacing = switchcert.Deps{CLIPause: time.Millisecond, HelloRetry: 5 * time.Millisecond}
	return startAdminRackWith(t, fastAdminTiming, func(d *Deps) { d.SwitchCert = cfg })
}

// startCertRackFabric is startCertRack with the scale-up fabric client:
// NMX-C and gNMI over TLS that verifies nothing (the tests' material is no
// real certificate, so the simulator checks no client certificate).
func startCertRackFabric(t *testing.T, cfg SwitchCertConfig) *adminRack {
	cfg.Pacing = switchcert.Deps{CLIPause: time.Millisecond, HelloRetry: 5 * time.Millisecond, ManagerSettle: time.Millisecond}
	return startAdminRackConf(t, fastAdminTiming, adminRackConf{deps: func(w adminWiring, d *Deps) {
		unverified := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // the simulator's self-made certificates
		d.SwitchCert = cfg
		d.Fabric = &fabric.Options{NVUE: w.nvue, SSH: w.ssh,
			NMXC:   nmxc.Options{Port: w.fleet.NMXPort(), TLS: unverified, HelloRetry: 5 * time.Millisecond},
			GNMI:   gnmicap.Options{Port: w.fleet.GNMIPort(), TLS: unverified, Timeout: 5 * time.Second},
			Timing: fabric.Timing{}.Scaled(0.0001)}
	}})
}

// certResult is the part of a switch certificate result_json the tests read.
type certResult struct {
	Status   string          `json:"status"`
	Services json.RawMessage `json:"services"`
	CertID   string          `json:"certificate_id"`
	CAID     string          `json:"ca_certificate_id"`
	Timing   struct {
		Stages []struct {
			Name, Status, Message string
		} `json:"stages"`
	} `json:"timing_summary"`
}

func parseCertResult(t *testing.T, s string) certResult {
	t.Helper()
	var r certResult
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("result_json %q: %v", s, err)
	}
	return r
}

// stageStatuses words a timeline as name=status pairs.
func (r certResult) stageStatuses() string {
	var out []string
	for _, s := range r.Timing.Stages {
		out = append(out, s.Name+"="+s.Status)
	}
	return strings.Join(out, " ")
}

var bindServices = []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_NVUE_API,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY_INTERFACE}

func TestConfigureSwitchCertificate_BindsEachSwitchAndNeverShowsTheKey(t *testing.T) {
	a := startCertRackFabric(t, SwitchCertConfig{CertRoot: writeMaterial(t, "site.a"), DefaultDomain: "site.a"})
	sw := a.ofKind(hw.KindSwitch)
	compute := a.ofKind(hw.KindCompute)[0]
	for _, n := range sw[:3] {
		a.nvos(t, n).EnableGNMI(true) // the gNMI test hello
	}
	a.nvos(t, sw[2]).FailCertImports("import failed: simulated bad material")
	resp, err := a.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodeSet(sw[0], sw[1], sw[2], compute), Services: bindServices, TestHello: true})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetJobId() == "" || r.GetStats().GetFailedNodes() != 1 || len(resp.GetJobs()) != 3 ||
		!strings.Contains(r.GetNodeResults()[3].GetErrorMessage(), "not an NVLink switch") {
		t.Fatalf("response = %v", resp)
	}
	for i, j := range resp.GetJobs() {
		if j.GetNodeId() != sw[i].ID || j.GetJobId() == "" {
			t.Fatalf("jobs[%d] = %v", i, j)
		}
	}
	states := a.waitJobs(t, r.GetJobId())
	for _, n := range sw[:2] {
		c := childOf(t, states, n.ID)
		st, err := a.client.GetConfigureSwitchCertificateJobStatus(rpcContext(t),
			&rmspb.GetConfigureSwitchCertificateJobStatusRequest{JobId: c.GetJobId()})
		if err != nil || st.GetState() != "completed" {
			t.Fatalf("%s: %v, %v", n.ID, st, err)
		}
		res := parseCertResult(t, st.GetResultJson())
		if res.Status != "completed" || res.stageStatuses() != "prepare_remote_dir=completed sftp_copy_ca_pem=completed "+
			"sftp_copy_client_pem=completed sftp_copy_client_key=completed import_material=completed bind_services=completed "+
			"verify_services=completed test_hello=completed" || !strings.HasPrefix(res.CertID, "rms-site-a-cert-") {
			t.Errorf("%s: %s", n.ID, st.GetResultJson())
		}
		for _, svc := range []string{"api", "gnmi-server"} {
			if crt, ca := a.nvos(t, n).TLSBinding(svc); crt != res.CertID || ca != res.CAID {
				t.Errorf("%s %s bound to %q/%q, want %q/%q", n.ID, svc, crt, ca, res.CertID, res.CAID)
			}
		}
	}
	bad := childOf(t, states, sw[2].ID)
	res := parseCertResult(t, bad.GetResultJson())
	if bad.GetExecutionState() != failed || res.Status != "failed" || !strings.Contains(bad.GetErrorMessage(), "import_material") ||
		!strings.HasSuffix(res.stageStatuses(), "import_material=failed bind_services=skipped verify_services=skipped test_hello=skipped") {
		t.Errorf("failing switch: %v", bad)
	}
	if crt, _ := a.nvos(t, sw[2]).TLSBinding("api"); crt != "" {
		t.Errorf("the failing switch was bound to %q", crt)
	}
	a.assertNeverShown(t, secretKeyLine, states...)
}

func TestConfigureSwitchCertificate_InsecureSwitchUnsetsInstead(t *testing.T) {
	a := startCertRack(t, SwitchCertConfig{Insecure: true})
	sw := a.ofKind(hw.KindSwitch)
	a.nvos(t, sw[0]).BindTLS("api", "old-cert", "old-ca")
	resp, err := a.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodeSet(sw[0]), Services: bindServices[:1]})
	if err != nil || len(resp.GetJobs()) != 1 || resp.GetResponse().GetMessage() !=
		"Started 1 of 1 switch certificate installs. Use GetConfigureSwitchCertificateJobStatus with response.job_id to track progress." {
		t.Fatalf("response = %v, %v", resp, err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	c := childOf(t, states, sw[0].ID)
	if c.GetExecutionState() != completed ||
		!strings.Contains(c.GetResultJson(), `"nvue-api":"unset"`) {
		t.Fatalf("child = %v", c)
	}
	if _, ca := a.nvos(t, sw[0]).TLSBinding("api"); ca != "" {
		t.Errorf("api still requires client certificates from %q", ca)
	}
}

func TestBatchDisableSwitchMtls_DisablesAndReportsAlreadyDisabled(t *testing.T) {
	a := startCertRack(t, SwitchCertConfig{})
	sw := a.ofKind(hw.KindSwitch)
	a.nvos(t, sw[0]).BindTLS("api", "c1", "ca1")
	a.nvos(t, sw[0]).BindTLS("gnmi-server", "c1", "ca1")
	resp, err := a.client.BatchDisableSwitchMtls(rpcContext(t), &rmspb.BatchDisableSwitchMtlsRequest{
		Nodes: nodeSet(sw[0], sw[1]), Services: bindServices})
	if err != nil || resp.GetResponse().GetStats().GetFailedNodes() != 0 {
		t.Fatalf("response = %v, %v", resp, err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	if states[0].GetExecutionState() != completed {
		t.Fatalf("parent = %v", states[0])
	}
	done := parseCertResult(t, childOf(t, states, sw[0].ID).GetResultJson())
	if done.Status != "completed" || !strings.Contains(string(done.Services), `"scale-up-fabric-telemetry-interface":"unset"`) {
		t.Errorf("bound switch: %+v", done)
	}
	for _, svc := range []string{"api", "gnmi-server"} {
		if _, ca := a.nvos(t, sw[0]).TLSBinding(svc); ca != "" {
			t.Errorf("%s still requires client certificates from %q", svc, ca)
		}
	}
	if a.nvos(t, sw[0]).Saves() == 0 {
		t.Errorf("the configuration was not saved")
	}
	already := parseCertResult(t, childOf(t, states, sw[1].ID).GetResultJson())
	if already.Status != "already_disabled" ||
		!strings.Contains(string(already.Services), `"scale-up-fabric-telemetry-interface":"already_disabled"`) {
		t.Errorf("unbound switch: %+v", already)
	}
}

func TestConfigureSwitchCertificate_CancelledCopyIsRecordedCancelled(t *testing.T) {
	a := startCertRack(t, SwitchCertConfig{CertRoot: writeMaterial(t, "d"), DefaultDomain: "d"})
	sw := a.ofKind(hw.KindSwitch)[0]
	a.nvos(t, sw).StallUploads(0)
	t.Cleanup(a.nvos(t, sw).ResumeUploads)
	resp, err := a.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodeSet(sw), Services: bindServices[:1]})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("response = %v, %v", resp, err)
	}
	child := resp.GetJobs()[0].GetJobId()
	eventuallyRPC(t, "the copy under way", func() bool {
		st, err := a.client.GetConfigureSwitchCertificateJobStatus(rpcContext(t),
			&rmspb.GetConfigureSwitchCertificateJobStatusRequest{JobId: child})
		return err == nil && strings.Contains(st.GetMessage(), "sftp_copy_ca_pem")
	})
	if _, err := a.engine.Cancel(rpcContext(t), child); err != nil {
		t.Fatal(err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	c := childOf(t, states, sw.ID)
	res := parseCertResult(t, c.GetResultJson())
	if c.GetExecutionState() != failed || res.Status != "cancelled" ||
		!strings.HasPrefix(res.stageStatuses(), "prepare_remote_dir=completed sftp_copy_ca_pem=failed sftp_copy_client_pem=skipped") {
		t.Fatalf("child = %v", c)
	}
}

// Without the scale-up fabric client (Deps.Fabric), the NMX services
// cannot be bound: bind_services fails before anything is bound.
func TestConfigureSwitchCertificate_NMXServicesNeedTheFabricClient(t *testing.T) {
	a := startCertRack(t, SwitchCertConfig{CertRoot: writeMaterial(t, "d"), DefaultDomain: "d"})
	sw := a.ofKind(hw.KindSwitch)[0]
	resp, err := a.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodeSet(sw), Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_NVUE_API,
			rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_MANAGER}})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("response = %v, %v", resp, err)
	}
	c := childOf(t, a.waitJobs(t, resp.GetResponse().GetJobId()), sw.ID)
	res := parseCertResult(t, c.GetResultJson())
	if c.GetExecutionState() != failed || !strings.Contains(c.GetErrorMessage(), "needs the scale-up fabric client") ||
		!strings.Contains(res.stageStatuses(), "bind_services=failed verify_services=skipped") {
		t.Fatalf("child = %v", c)
	}
	if crt, _ := a.nvos(t, sw).TLSBinding("api"); crt != "" {
		t.Errorf("api was bound to %q", crt)
	}
}
