package ctl

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/test/pki"
)

// versionServer answers GetVersion only.
type versionServer struct {
	rmspb.UnimplementedRackManagerServer
}

func (versionServer) GetVersion(context.Context, *rmspb.GetVersionRequest) (*rmspb.GetVersionResponse, error) {
	return &rmspb.GetVersionResponse{Version: "v9.9.9-mtls"}, nil
}

// runCtl runs rmsctl in-process with a config home of its own.
func runCtl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// TestMutualTLS dials a server with rmsd's own mTLS configuration: rmsctl
// gets in with --ca, --cert, --key and --server-name (or the same from a
// config file, its paths relative to the file), and not without the
// client certificate or the server's name.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	m := pki.NewMTLS(t, dir, "rmsd.test", "client", "rmsd.test")
	caFile, cliCert, cliKey := m.CAFile, m.ClientCert, m.ClientKey
	cfg, err := rmsserver.MTLSConfig(m.ServerCert, m.ServerKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	rmspb.RegisterRackManagerServer(srv, versionServer{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	addr := lis.Addr().String()

	code, out, errOut := runCtl(t, "--addr", addr, "--ca", caFile, "--cert", cliCert, "--key", cliKey, "--server-name", "rmsd.test", "version")
	if code != ExitOK || !strings.Contains(out, "v9.9.9-mtls") || !strings.Contains(out, "(mTLS)") {
		t.Fatalf("version over mTLS: exit %d, %q %q", code, out, errOut)
	}

	config := filepath.Join(dir, "rmsctl.toml")
	pki.WriteFile(t, config, []byte(`addr = "`+addr+`"
ca = "ca.crt"
cert = "client.crt"
key = "client.key"
server_name = "rmsd.test"
timeout = "5s"
`))
	if code, out, errOut := runCtl(t, "--config", config, "-o", "json", "version"); code != ExitOK || !strings.Contains(out, `"version":"v9.9.9-mtls"`) {
		t.Fatalf("version with the target from a config file: exit %d, %q %q", code, out, errOut)
	}

	for name, args := range map[string][]string{
		"no client certificate": {"--addr", addr, "--ca", caFile, "--server-name", "rmsd.test", "--timeout", "3s", "version"},
		"no server name":        {"--addr", addr, "--ca", caFile, "--cert", cliCert, "--key", cliKey, "--timeout", "3s", "version"},
		"plaintext":             {"--addr", addr, "--timeout", "3s", "version"},
	} {
		if code, _, errOut := runCtl(t, args...); code != ExitUnreachable || !strings.Contains(errOut, addr) {
			t.Errorf("%s: exit %d, %q; want %d naming the address", name, code, errOut, ExitUnreachable)
		}
	}
	if code, _, errOut := runCtl(t, "--addr", addr, "--cert", cliCert, "version"); code != ExitUsage || !strings.Contains(errOut, "--key") {
		t.Errorf("--cert without --key: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCtl(t, "--addr", addr, "--ca", filepath.Join(dir, "client.key"), "version"); code != ExitUsage || !strings.Contains(errOut, "no PEM certificate") {
		t.Errorf("a CA file without a certificate: exit %d, %q", code, errOut)
	}
}
