package ctl

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/test/pki"
)

// TestPermissionDenied: a call rmsd's [authz] refuses prints the RPC and
// the refusal (the missing permission and the certificate's identity)
// and exits ExitDenied.
func TestPermissionDenied(t *testing.T) {
	m := pki.NewMTLS(t, t.TempDir(), "rmsd.test", "operator", "ops.example.org")
	caFile, cliCert, cliKey := m.CAFile, m.ClientCert, m.ClientKey
	tlsCfg, err := rmsserver.MTLSConfig(m.ServerCert, m.ServerKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := authz.New(config.Authz{
		Roles:    map[string]config.AuthzRole{"power-only": {Permissions: []string{"power"}}},
		Bindings: []config.AuthzBinding{{Roles: []string{"power-only"}, CN: "operator"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := rmsserver.New(rmsserver.Options{Logger: zerolog.Nop(), TLS: tlsCfg, Authorizer: policy, Deps: rmsserver.Deps{Version: "v-authz"}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	target := []string{"--addr", lis.Addr().String(), "--ca", caFile, "--cert", cliCert, "--key", cliKey, "--server-name", "rmsd.test"}

	code, out, errOut := runCtl(t, append(target, "racks", "list")...)
	want := `rmsctl: ListRacks: permission denied: permission "read" is not granted to CN=operator dns:ops.example.org`
	if code != ExitDenied || out != "" || strings.TrimSpace(errOut) != want {
		t.Errorf("racks list: exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, ExitDenied, want)
	}
	code, _, errOut = runCtl(t, append(target, "call", "GetVersion")...)
	if code != ExitDenied || !strings.Contains(errOut, "GetVersion: permission denied: permission \"read\"") {
		t.Errorf("call GetVersion: exit %d, stderr %q", code, errOut)
	}
}
