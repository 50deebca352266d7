package switchcert

import (
	"github.com/rmsd/rmsd/hw/pause"

	"github.com/rmsd/rmsd/hw/timeline"

	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// CertDir is where material is copied on a switch, one directory per run.
const CertDir = "/home/admin/certs"

// ConfigurePlan installs Material on Node and binds Services to it.
type ConfigurePlan struct {
	Node     hw.Node
	Services []string
	Material Material
	// TestHello asks for a post-install connection test.
	TestHello bool
}

// Configure stages, in order.
const (
	stPrepare = iota
	stCopyCA
	stCopyCert
	stCopyKey
	stImport
	stBind
	stVerify
	stHello
)

var configureStages = []string{"prepare_remote_dir", "sftp_copy_ca_pem", "sftp_copy_client_pem", "sftp_copy_client_key",
	"import_material", "bind_services", "verify_services", "test_hello"}

// configureRun is one execution of a ConfigurePlan.
type configureRun struct {
	plan        ConfigurePlan
	d           Deps
	runID       string
	dir         string
	caID, crtID string
}

// nonID is what an id may not hold.
var nonID = regexp.MustCompile(`[^A-Za-z0-9-]`)

// RunID words t as upstream names a run: UTC %Y-%m-%d_%H-%M-%S_%3f.
func RunID(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%s_%03d", t.Format("2006-01-02_15-04-05"), t.Nanosecond()/int(time.Millisecond))
}

// Workflow returns the job workflow of the plan.
func (p ConfigurePlan) Workflow(d Deps) messages.Workflow {
	d = d.withDefaults()
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		r := &configureRun{plan: p, d: d, runID: RunID(d.Now())}
		r.dir = CertDir + "/" + r.runID
		dom := nonID.ReplaceAllString(p.Material.Domain, "-")
		r.caID, r.crtID = "rms-"+dom+"-ca-"+r.runID, "rms-"+dom+"-cert-"+r.runID
		r.execute(ctx, job)
	})
}

func (r *configureRun) fields(status, errMsg string) map[string]any {
	f := map[string]any{"status": status, "rack_id": r.plan.Node.RackID, "node_id": r.plan.Node.ID,
		"domain": r.plan.Material.Domain, "services": r.plan.Services, "run_id": r.runID, "remote_dir": r.dir,
		"ca_certificate_id": r.caID, "certificate_id": r.crtID, "test_hello": r.plan.TestHello}
	if errMsg != "" {
		f["error_message"] = errMsg
	}
	return f
}

func (r *configureRun) execute(ctx context.Context, job messages.Reporter) {
	tl := timeline.New(r.d.Now, timeline.Named(configureStages...))
	key := r.plan.Material.Key
	for i, name := range configureStages {
		if i == stHello && !r.plan.TestHello {
			tl.Skip(i, "not requested")
			continue
		}
		if ctx.Err() != nil {
			r.cancelled(ctx, job, tl, "before "+name)
			return
		}
		job.Progress(fmt.Sprintf("Switch certificate stage %d/%d: %s", i+1, len(configureStages), name))
		tl.Begin(i, name)
		details, err := r.stage(ctx, i)
		switch {
		case err == nil:
			tl.End(i, statusCompleted, name+": done", details)
		case ctx.Err() != nil:
			tl.End(i, statusFailed, "cancelled", details)
			r.cancelled(ctx, job, tl, "during "+name)
			return
		default:
			msg := scrub(fmt.Sprintf("switch certificate install on %s failed in stage %s: %v", r.plan.Node.ID, name, err), key)
			tl.End(i, statusFailed, scrub(err.Error(), key), details)
			_ = job.Fail(messages.Failure{Code: classify(err), Description: "Switch certificate install failed in stage " + name,
				Message: msg, ResultJSON: scrub(result(tl, r.fields(statusFailed, msg)), key)})
			return
		}
	}
	_ = job.Complete("Switch certificate installed", scrub(result(tl, r.fields(statusCompleted, "")), key))
}

// cancelled records the job Failed with status "cancelled".
func (r *configureRun) cancelled(ctx context.Context, job messages.Reporter, tl *timeline.Timeline, where string) {
	msg := "switch certificate job cancelled " + where
	if errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
		msg += ": rmsd is shutting down"
	}
	_ = job.Fail(messages.Failure{Code: messages.ErrorOther, Description: "Switch certificate install cancelled",
		Message: msg, ResultJSON: result(tl, r.fields(statusCancelled, msg))})
}

func (r *configureRun) op(ctx context.Context, f func(ctx context.Context, c platform.SwitchCertifier) error) error {
	return r.d.step(ctx, r.plan.Node, f)
}

func (r *configureRun) stage(ctx context.Context, i int) (map[string]string, error) {
	m := r.plan.Material
	switch i {
	case stPrepare:
		return map[string]string{"dir": r.dir}, r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
			return c.PrepareCertDir(ctx, CertDir, r.dir)
		})
	case stCopyCA:
		return r.copy(ctx, caFile, m.CA, 0o644)
	case stCopyCert:
		return r.copy(ctx, certFile, m.Cert, 0o644)
	case stCopyKey:
		return r.copy(ctx, keyFile, []byte(m.Key.Reveal()), 0o400)
	case stImport:
		return r.importMaterial(ctx)
	case stBind:
		return r.bind(ctx)
	case stVerify:
		return r.verify(ctx)
	default:
		return r.hello(ctx)
	}
}

func (r *configureRun) copy(ctx context.Context, name string, data []byte, mode os.FileMode) (map[string]string, error) {
	path := r.dir + "/" + name
	details := map[string]string{"path": path, "mode": fmt.Sprintf("%o", mode)}
	return details, r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
		return c.CopyCertFile(ctx, platform.CertFile{Path: path, Data: data, Mode: mode})
	})
}

func (r *configureRun) importMaterial(ctx context.Context) (map[string]string, error) {
	details := map[string]string{"ca_certificate_id": r.caID, "certificate_id": r.crtID}
	err := r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
		return c.ImportCACertificate(ctx, r.caID, "file://"+r.dir+"/"+caFile)
	})
	if err != nil {
		return details, err
	}
	return details, r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
		return c.ImportCertificate(ctx, r.crtID, "file://"+r.dir+"/"+certFile, "file://"+r.dir+"/"+keyFile)
	})
}

// bindOrder is the plan's services in binding order: the NVUE API last,
// since binding it changes how rmsd itself is answered.
func (r *configureRun) bindOrder() []string {
	out := slices.Clone(r.plan.Services)
	slices.SortStableFunc(out, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == ServiceNVUEAPI:
			return 1
		case b == ServiceNVUEAPI:
			return -1
		}
		return 0
	})
	return out
}

func (r *configureRun) bind(ctx context.Context) (map[string]string, error) {
	details := map[string]string{}
	for _, s := range r.plan.Services {
		if _, ok := clusterApp[s]; ok && r.d.Fabric == nil {
			details[s] = "not supported"
			return details, fmt.Errorf("%w: binding %s to mTLS needs the scale-up fabric client, which this rmsd has not configured; nothing was bound",
				errNotSupported, s)
		}
	}
	for _, s := range r.bindOrder() {
		if app, ok := clusterApp[s]; ok {
			viaCLI, err := r.bindApp(ctx, app)
			if err != nil {
				return details, err
			}
			details[s] = "bound"
			if viaCLI {
				details[s] = "bound (encryption set with the nv CLI)"
			}
			continue
		}
		svc := nvueService[s]
		if err := r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
			return c.BindServiceTLS(ctx, svc, r.crtID, r.caID)
		}); err != nil {
			return details, err
		}
		details[s] = "bound"
	}
	return details, nil
}

// bindApp binds an NMX cluster app's manager to the installed material
// (southbound §3.11): the cluster and the app's manager enabled first
// (§3.12), then the manager's certificate, CA certificate and mtls
// encryption, ManagerSettle apart; when the encryption @update fails, the
// nv CLI sets it (viaCLI).
func (r *configureRun) bindApp(ctx context.Context, app string) (viaCLI bool, err error) {
	fs, err := r.d.fabricSwitch(r.plan.Node, "binding "+app+" to mTLS")
	if err != nil {
		return false, err
	}
	defer fs.Close()
	cl, err := fs.Cluster(ctx)
	if err != nil {
		return false, err
	}
	if !cl.Enabled() {
		if _, err := fs.SetCluster(ctx, true); err != nil {
			return false, err
		}
	}
	st, err := fs.App(ctx, app)
	if err != nil {
		return false, err
	}
	if !st.ManagerEnabled() {
		if err := fs.SetAppManager(ctx, app, true); err != nil {
			return false, err
		}
	}
	for _, u := range []struct {
		leaf   string
		params map[string]any
	}{
		{"certificate", map[string]any{"cert-id": r.crtID}},
		{"ca-certificate", map[string]any{"cacert-id": r.caID}},
	} {
		if err := r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
			return c.UpdateAppManager(ctx, app, u.leaf, u.params)
		}); err != nil {
			return false, err
		}
		if err := pause.For(ctx, r.d.ManagerSettle); err != nil {
			return false, err
		}
	}
	err = r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
		return c.UpdateAppManager(ctx, app, "encryption", map[string]any{"encryption": "mtls"})
	})
	if err == nil || ctx.Err() != nil {
		return false, err
	}
	cmd := "nv action update cluster apps " + app + " manager encryption mtls"
	var out []platform.CommandOutcome
	if cerr := r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) (err error) {
		out, err = c.RunCLI(ctx, 0, cmd)
		return err
	}); cerr != nil {
		return true, fmt.Errorf("%v; then %w", err, cerr)
	}
	if len(out) == 1 && out[0].Err != nil {
		return true, fmt.Errorf("%v; then %s: %w: %s", err, cmd, out[0].Err, out[0].Output)
	}
	return true, nil
}

func (r *configureRun) verify(ctx context.Context) (map[string]string, error) {
	details := map[string]string{}
	var cert, ca map[string]any
	err := r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) (err error) {
		if cert, err = c.Certificate(ctx, r.crtID, false); err != nil {
			return err
		}
		ca, err = c.Certificate(ctx, r.caID, true)
		return err
	})
	if err != nil {
		return details, err
	}
	_ = ca // its presence is the check
	validTo, err := certValidTo(cert, r.d.Now())
	if err != nil {
		return details, fmt.Errorf("certificate %s: %w", r.crtID, err)
	}
	details["valid_to"] = validTo
	installed := installedList(cert)
	for _, s := range r.plan.Services {
		if app, ok := clusterApp[s]; ok {
			if err := r.verifyApp(ctx, app); err != nil {
				return details, err
			}
			details[s] = "verified"
			continue
		}
		svc := nvueService[s]
		if !slices.Contains(installed, installedName[s]) {
			return details, fmt.Errorf("certificate %s is not installed for %s (installed: %v)", r.crtID, installedName[s], installed)
		}
		var mtls map[string]any
		if err := r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) (err error) {
			mtls, err = c.ServiceMTLS(ctx, svc)
			return err
		}); err != nil {
			return details, err
		}
		if got, _ := mtls["ca-certificate"].(string); got != r.caID {
			return details, fmt.Errorf("%s mtls ca-certificate is %q, want %q", svc, got, r.caID)
		}
		details[s] = "verified"
	}
	return details, nil
}

// verifyApp reads an NMX app manager's binding back: the run's
// certificate and CA certificate with mtls encryption.
func (r *configureRun) verifyApp(ctx context.Context, app string) error {
	var got map[string]string
	if err := r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) (err error) {
		got, err = c.AppManagerTLS(ctx, app)
		return err
	}); err != nil {
		return err
	}
	if got["cert-id"] != r.crtID || got["cacert-id"] != r.caID || got["encryption"] != "mtls" {
		return fmt.Errorf("%s manager is bound to certificate %q, CA certificate %q with encryption %q; want %q, %q, mtls",
			app, got["cert-id"], got["cacert-id"], got["encryption"], r.crtID, r.caID)
	}
	return nil
}

// certValidTo finds valid-to (top level, or under operational or applied)
// and checks it is an RFC 3339 time after now.
func certValidTo(cert map[string]any, now time.Time) (string, error) {
	for _, m := range []any{cert, cert["operational"], cert["applied"]} {
		mm, _ := m.(map[string]any)
		s, ok := mm["valid-to"].(string)
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return s, fmt.Errorf("valid-to %q is not an RFC 3339 time", s)
		}
		if !t.After(now) {
			return s, fmt.Errorf("expired: valid-to %s", s)
		}
		return s, nil
	}
	return "", errors.New("no valid-to")
}

// installedList reads "installed" as a list or the keys of a map.
func installedList(cert map[string]any) []string {
	var out []string
	switch v := cert["installed"].(type) {
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case map[string]any:
		for k := range v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// hello is the post-install connection test over rmsd's outbound mTLS
// identity: NVUE GET /system always, NMX-C Hello when the fabric manager
// was bound, gNMI Capabilities when the telemetry interface was; five
// tries HelloRetry apart for NVUE and gNMI (NMX-C's Hello retries on its
// own while the manager is Unavailable). nmx-telemetry has no test
// (upstream has none).
func (r *configureRun) hello(ctx context.Context) (map[string]string, error) {
	details := map[string]string{}
	try := func(key string, f func(ctx context.Context) error) error {
		var err error
		for n := 1; n <= 5; n++ {
			details[key+"_tries"] = fmt.Sprint(n)
			if err = f(ctx); err == nil || n == 5 || ctx.Err() != nil {
				break
			}
			if perr := pause.For(ctx, r.d.HelloRetry); perr != nil {
				return perr
			}
		}
		return err
	}
	if err := try("nvue", func(ctx context.Context) error {
		return r.op(ctx, func(ctx context.Context, c platform.SwitchCertifier) error {
			p, ok := c.(platform.NVOSProber)
			if !ok {
				return fmt.Errorf("%w: no NVUE probe", hw.ErrUnsupported)
			}
			return p.ProbeNVOS(ctx)
		})
	}); err != nil {
		return details, err
	}
	details[ServiceNVUEAPI] = "answered"
	manager := slices.Contains(r.plan.Services, ServiceFabricManager)
	gnmi := slices.Contains(r.plan.Services, ServiceTelemetryInterface)
	if slices.Contains(r.plan.Services, ServiceFabricTelemetry) {
		details[ServiceFabricTelemetry] = "no test hello"
	}
	if !manager && !gnmi {
		return details, nil
	}
	fs, err := r.d.fabricSwitch(r.plan.Node, "the NMX-C and gNMI test hellos")
	if err != nil {
		return details, err
	}
	defer fs.Close()
	if manager {
		if err := fs.Hello(ctx); err != nil {
			return details, err
		}
		details[ServiceFabricManager] = "answered"
	}
	if gnmi {
		var version string
		if err := try("gnmi", func(ctx context.Context) (err error) {
			version, err = fs.GNMICapabilities(ctx)
			return err
		}); err != nil {
			return details, err
		}
		details[ServiceTelemetryInterface] = "answered (gNMI " + version + ")"
	}
	return details, nil
}
