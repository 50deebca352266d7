package nvossim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Switch mTLS (southbound §3.11): imported certificates and CA
// certificates, the mTLS bindings of the NVUE API ("api") and the gNMI
// server ("gnmi-server") set through revisions, and the NVOS CLI commands
// that unset them. The NMX cluster apps' manager bindings are in
// nvue_fabric.go and fabric_cli.go.

// certValidity is how long an imported certificate is valid.
const certValidity = 365 * 24 * time.Hour

// tlsBinding is one service's TLS settings.
type tlsBinding struct {
	certificate string // the certificate the service presents
	ca          string // the CA client certificates must chain to (mTLS)
}

// tlsState is the switch's certificate store and bindings.
type tlsState struct {
	certs map[string]time.Time // certificate id -> valid-to
	// pairs are the imported certificates whose files parse as a TLS key
	// pair: the NVUE API bound to one serves it (nvueCertificate).
	pairs map[string]*tls.Certificate
	// caPools are the imported CA certificates that parse as PEM: a
	// service bound to mTLS with one accepts client certificates it
	// signed (clientVerifiedLocked).
	caPools    map[string]*x509.CertPool
	caCerts    map[string]time.Time
	bindings   map[string]*tlsBinding // "api", "gnmi-server"
	pendingCLI []func() bool          // staged "nv unset"s; each reports a change
	importFail string
}

// tlsLocked returns the switch's TLS state, created on first use.
func (s *Switch) tlsLocked() *tlsState {
	if s.tls.certs == nil {
		s.tls.certs, s.tls.caCerts = map[string]time.Time{}, map[string]time.Time{}
		s.tls.pairs = map[string]*tls.Certificate{}
		s.tls.caPools = map[string]*x509.CertPool{}
		s.tls.bindings = map[string]*tlsBinding{"api": {}, "gnmi-server": {}}
	}
	return &s.tls
}

// tlsRoutes registers the certificate and binding resources.
func (s *Switch) tlsRoutes(route func(pattern string, f nvueFunc)) {
	route("POST /nvue_v1/system/security/ca-certificate/{id}", s.postCAImport)
	route("POST /nvue_v1/system/security/certificate/{id}", s.postCertImport)
	route("GET /nvue_v1/system/security/ca-certificate/{id}", func(q *nvueReq) reply { return s.getCert(q, true) })
	route("GET /nvue_v1/system/security/certificate/{id}", func(q *nvueReq) reply { return s.getCert(q, false) })
	route("GET /nvue_v1/system/{svc}/mtls", s.getMTLS)
}

// fileURI resolves a file:// URI to a file of the switch.
func (s *Switch) fileURI(v any) (string, bool) {
	u, _ := v.(string)
	p, ok := strings.CutPrefix(u, "file://")
	if !ok || p == "" {
		return "", false
	}
	return cleanPath(p), true
}

func (s *Switch) postCAImport(q *nvueReq) reply {
	p, ok := actionParams(q.body, "import")
	if !ok {
		return errReply(http.StatusBadRequest, "expected an @import action")
	}
	file, ok := s.fileURI(p["uri"])
	if !ok {
		return errReply(http.StatusBadRequest, "uri must be a file:// URI")
	}
	id := q.r.PathValue("id")
	a := s.startActionLocked(q.now, time.Second, "Importing CA certificate", "CA certificate imported", func(end time.Time) string {
		t := s.tlsLocked()
		if t.importFail != "" {
			return t.importFail
		}
		if !strings.Contains(string(s.fileData(file)), "BEGIN CERTIFICATE") {
			return "import failed: " + file + " is not a PEM certificate"
		}
		t.caCerts[id] = end.Add(certValidity)
		if pool := x509.NewCertPool(); pool.AppendCertsFromPEM(s.fileData(file)) {
			t.caPools[id] = pool
		} else {
			delete(t.caPools, id)
		}
		return ""
	})
	return actionAccepted(a)
}

func (s *Switch) postCertImport(q *nvueReq) reply {
	p, ok := actionParams(q.body, "import")
	if !ok {
		return errReply(http.StatusBadRequest, "expected an @import action")
	}
	pub, ok1 := s.fileURI(p["uri-public-key"])
	key, ok2 := s.fileURI(p["uri-private-key"])
	if !ok1 || !ok2 {
		return errReply(http.StatusBadRequest, "uri-public-key and uri-private-key must be file:// URIs")
	}
	id := q.r.PathValue("id")
	a := s.startActionLocked(q.now, time.Second, "Importing certificate", "Certificate imported", func(end time.Time) string {
		t := s.tlsLocked()
		switch {
		case t.importFail != "":
			return t.importFail
		case !strings.Contains(string(s.fileData(pub)), "BEGIN CERTIFICATE"):
			return "import failed: " + pub + " is not a PEM certificate"
		case !strings.Contains(string(s.fileData(key)), "PRIVATE KEY"):
			return "import failed: " + key + " is not a PEM private key"
		}
		t.certs[id] = end.Add(certValidity)
		if kp, err := tls.X509KeyPair(s.fileData(pub), s.fileData(key)); err == nil {
			t.pairs[id] = &kp
		} else {
			delete(t.pairs, id)
		}
		return ""
	})
	return actionAccepted(a)
}

// nvueCertificate is the certificate the NVUE server presents in a
// handshake: the one the API is bound to when its import was a real key
// pair (after ConfigureSwitchCertificate), else the switch's own, the
// factory one (Config.Certificate, or self-signed).
func (s *Switch) nvueCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	t := s.tlsLocked()
	if kp := t.pairs[t.bindings["api"].certificate]; kp != nil {
		return kp, nil
	}
	return &s.tlsCrt, nil
}

// serviceCertificate is GetCertificate of a gRPC service: the imported
// key pair bound returns (a certificate id), else the switch's own.
func (s *Switch) serviceCertificate(bound func() string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.advanceLocked(s.now())
		if kp := s.tlsLocked().pairs[bound()]; kp != nil {
			return kp, nil
		}
		return &s.tlsCrt, nil
	}
}

// clientVerifiedLocked reports whether a gRPC call came over TLS with a
// client certificate that chains to the CA certificate caID imported on
// the switch: what a service bound to mTLS with caID demands. A CA id the
// simulator has no PEM material for (set with BindTLS, or imported from a
// file that is no certificate) can verify nothing: any TLS call passes.
func (s *Switch) clientVerifiedLocked(ctx context.Context, caID string) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return false
	}
	pool := s.tlsLocked().caPools[caID]
	if pool == nil {
		return true
	}
	if len(info.State.PeerCertificates) == 0 {
		return false
	}
	chain := info.State.PeerCertificates
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: s.now()})
	return err == nil
}

// fileData is a switch file's contents, nil when absent.
func (s *Switch) fileData(p string) []byte {
	if f, ok := s.fs.files[p]; ok {
		return f.data
	}
	return nil
}

func (s *Switch) getCert(q *nvueReq, ca bool) reply {
	t := s.tlsLocked()
	id := q.r.PathValue("id")
	store := t.certs
	if ca {
		store = t.caCerts
	}
	validTo, ok := store[id]
	if !ok {
		return errReply(http.StatusNotFound, "no such certificate "+id)
	}
	body := map[string]any{"valid-to": validTo.UTC().Format(time.RFC3339)}
	if !ca {
		installed := []string{}
		if t.bindings["api"].certificate == id {
			installed = append(installed, "nvue-rest-api")
		}
		if t.bindings["gnmi-server"].certificate == id {
			installed = append(installed, "gnmi-server")
		}
		body["installed"] = installed
	}
	return reply{http.StatusOK, body}
}

func (s *Switch) getMTLS(q *nvueReq) reply {
	b, ok := s.tlsLocked().bindings[q.r.PathValue("svc")]
	if !ok {
		return errReply(http.StatusNotFound, "no such service "+q.r.PathValue("svc"))
	}
	out := map[string]any{}
	if b.ca != "" {
		out["ca-certificate"] = b.ca
	}
	if b.certificate != "" {
		out["certificate"] = b.certificate
	}
	return reply{http.StatusOK, out}
}

// applyTLSPatchesLocked applies the bindings staged in r; it returns an
// issue (the revision is then invalid) when one names a certificate the
// switch does not have.
func (s *Switch) applyTLSPatchesLocked(r *revision) string {
	t := s.tlsLocked()
	for path, v := range r.patches {
		body, _ := v.(map[string]any)
		rest, ok := strings.CutPrefix(path, "/nvue_v1/system/")
		if !ok {
			continue
		}
		svc, sub, _ := strings.Cut(rest, "/")
		b, ok := t.bindings[svc]
		if !ok || (sub != "" && sub != "mtls") {
			continue
		}
		if id, ok := body["certificate"].(string); ok && sub == "" {
			if _, known := t.certs[id]; !known {
				return "certificate " + id + " does not exist"
			}
			b.certificate = id
		}
		if id, ok := body["ca-certificate"].(string); ok && sub == "mtls" {
			if _, known := t.caCerts[id]; !known {
				return "ca-certificate " + id + " does not exist"
			}
			b.ca = id
		}
	}
	return ""
}

// runTLSCommand runs the NVOS CLI commands of the mTLS disable flow; ok is
// false for any other command.
func (s *Switch) runTLSCommand(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	line := strings.Join(args, " ")
	t := s.tlsLocked()
	unset := func(field *string) {
		t.pendingCLI = append(t.pendingCLI, func() bool {
			changed := *field != ""
			*field = ""
			return changed
		})
	}
	gnmi := t.bindings["gnmi-server"]
	switch line {
	case "unset system api mtls ca-certificate":
		unset(&t.bindings["api"].ca)
		return 0, true
	case "unset system gnmi-server mtls certificate", "unset system gnmi-server mtls ca-certificate":
		// Either names the CA client certificates must chain to; without
		// one, this NVOS has no mtls settings for gNMI.
		if gnmi.ca == "" {
			fmt.Fprintln(stderr, "Error: 'mtls' is not one of ['state', 'port', 'listening-address', 'version']")
			return 1, true
		}
		unset(&gnmi.ca)
		return 0, true
	case "config apply --assume-yes", "config apply -y":
		changed, failure := s.applyFabricLocked()
		if failure != "" {
			t.pendingCLI = nil
			fmt.Fprintln(stderr, "Error: "+failure)
			return 1, true
		}
		for _, f := range t.pendingCLI {
			changed = f() || changed
		}
		t.pendingCLI = nil
		if !changed {
			fmt.Fprintln(stdout, "Warning: config apply executed with no config diff")
			return 0, true
		}
		fmt.Fprintln(stdout, "applied")
		return 0, true
	}
	return 0, false
}

// FailCertImports makes every certificate import finished from now on fail
// with msg; an empty msg clears the fault.
func (s *Switch) FailCertImports(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tlsLocked().importFail = msg
	s.log.Info().Str("issue", msg).Msg("fault: fail certificate imports")
}

// TLSBinding returns the certificate and CA certificate ids service ("api"
// or "gnmi-server") is bound to, empty when unset.
func (s *Switch) TLSBinding(service string) (certificate, ca string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	if b, ok := s.tlsLocked().bindings[service]; ok {
		return b.certificate, b.ca
	}
	return "", ""
}

// BindTLS sets a service's binding directly, as an operator would,
// importing the ids if the switch lacks them.
func (s *Switch) BindTLS(service, certificate, ca string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tlsLocked()
	if b, ok := t.bindings[service]; ok {
		b.certificate, b.ca = certificate, ca
		if certificate != "" {
			t.certs[certificate] = s.now().Add(certValidity)
		}
		if ca != "" {
			t.caCerts[ca] = s.now().Add(certValidity)
		}
	}
}

// Certificates returns the ids of the imported certificates, sorted.
func (s *Switch) Certificates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	var ids []string
	for id := range s.tlsLocked().certs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
