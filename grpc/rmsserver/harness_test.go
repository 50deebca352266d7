package rmsserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
	"github.com/rmsd/rmsd/test/leakcheck"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == nvssvtsim.Command {
		// The system validation tests run this binary as the NVSSVT
		// stand-in, as `rmsd --simulate` runs itself.
		os.Exit(nvssvtsim.Main(context.Background(), os.Args[2:], os.Environ(), os.Stdout, os.Stderr))
	}
	code := m.Run()
	if code == 0 && *recordFuzzSeeds {
		if err := seeds.write(); err != nil {
			fmt.Fprintln(os.Stderr, "record fuzz seeds:", err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(leakcheck.ProtoactorThrottle); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testServer is a Server listening on a loopback port for one test.
type testServer struct {
	*Server
	addr string
	// stop shuts the server down and checks what Serve returned. The
	// test's cleanup calls it; a test may call it earlier (later calls do
	// nothing).
	stop func()
}

// startServer serves opts on 127.0.0.1 until the test ends (or stop).
// register adds test-only services before serving.
func startServer(t testing.TB, opts Options, register ...func(*grpc.Server)) *testServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(opts)
	for _, r := range register {
		r(srv.grpc)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	stop := sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-served; err != nil {
			t.Errorf("Serve returned %v", err)
		}
	})
	t.Cleanup(stop)
	return &testServer{Server: srv, addr: lis.Addr().String(), stop: stop}
}

// dial connects a client to addr, closed when the test ends.
// Every request a test sends through it is offered to the fuzz seed
// recorder (see fuzzseeds_test.go).
func dial(t testing.TB, addr string, tlsConfig *tls.Config) *grpc.ClientConn {
	t.Helper()
	creds := grpc.WithTransportCredentials(insecure.NewCredentials())
	if tlsConfig != nil {
		creds = grpc.WithTransportCredentials(credentials.NewTLS(tlsConfig))
	}
	conn, err := grpc.NewClient(addr, creds, grpc.WithChainUnaryInterceptor(seeds.record))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// startTestServer starts a plaintext server with deps and returns a client
// connection to it.
func startTestServer(t testing.TB, deps Deps) *grpc.ClientConn {
	t.Helper()
	ts := startServer(t, Options{Deps: deps, Logger: zerolog.Nop()})
	return dial(t, ts.addr, nil)
}

// rpcContext bounds one RPC in a test or benchmark.
func rpcContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitContext bounds a wait for a job to end: a runbook that takes
// seconds may take many times that on a loaded machine.
func waitContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newTestEngine starts a real job engine in its own actor system, closed
// when the test ends (after the server, which is stopped first).
func newTestEngine(t testing.TB) *actors.Engine {
	t.Helper()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	e, err := actors.New(sys, actors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		sys.Shutdown()
	})
	return e
}

// newOfflineRunner returns a node runner for tests whose nodes point at no
// device: connections fail within a fraction of a second (and nothing is
// ever resolved or dialled beyond what the nodes name).
func newOfflineRunner(t testing.TB) *nodeops.Runner {
	t.Helper()
	pool := redfish.NewPool(redfish.Options{ConnectTimeout: 200 * time.Millisecond, RequestTimeout: 500 * time.Millisecond,
		ProbeTimeout: 200 * time.Millisecond, LivenessInterval: 50 * time.Millisecond, LivenessTimeout: 500 * time.Millisecond})
	t.Cleanup(pool.Close)
	nv, err := nvue.NewPool(nvue.Options{ConnectTimeout: 200 * time.Millisecond, RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	return nodeops.New(platform.Deps{Redfish: pool, NVUE: nv, Logger: zerolog.Nop()}, 64)
}
