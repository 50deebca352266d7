package rmsserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/syncbuf"
)

func TestGetVersionAnswersBuildVersion(t *testing.T) {
	conn := startTestServer(t, Deps{Version: "v9.9.9 (rev abc)"})
	resp, err := rmspb.NewRackManagerClient(conn).GetVersion(rpcContext(t), &rmspb.GetVersionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetVersion() != "v9.9.9 (rev abc)" {
		t.Fatalf("version = %q", resp.GetVersion())
	}
}

func TestHealthServingThenNotServingAfterShutdown(t *testing.T) {
	ts := startServer(t, Options{Logger: zerolog.Nop()})
	conn := dial(t, ts.addr, nil)
	hc := healthpb.NewHealthClient(conn)
	for _, svc := range append([]string{""}, serviceNames...) {
		resp, err := hc.Check(rpcContext(t), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("Check(%q): %v", svc, err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("Check(%q) = %v, want SERVING", svc, resp.GetStatus())
		}
	}

	watch, err := hc.Watch(rpcContext(t), &healthpb.HealthCheckRequest{Service: serviceNames[0]})
	if err != nil {
		t.Fatal(err)
	}
	first, err := watch.Recv()
	if err != nil || first.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first watch update = %v, %v", first, err)
	}
	shutdownDone := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		ts.Shutdown(ctx)
		close(shutdownDone)
	}()
	next, err := watch.Recv()
	if err != nil {
		t.Fatalf("watch while draining: %v", err)
	}
	if next.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("status while draining = %v, want NOT_SERVING", next.GetStatus())
	}
	// The open watch stream holds the graceful stop; ending the grace
	// period cuts it.
	cancel()
	<-shutdownDone
}

func TestReflectionListsBothServices(t *testing.T) {
	conn := startTestServer(t, Deps{})
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(rpcContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range resp.GetListServicesResponse().GetService() {
		got[s.GetName()] = true
	}
	for _, want := range []string{"rack_manager.RackManager", "rack_manager_v2.RackManagerV2", "grpc.health.v1.Health"} {
		if !got[want] {
			t.Errorf("reflection does not list %s (got %v)", want, got)
		}
	}
	_ = stream.CloseSend()
}

// syncBuffer is the log of a server under test, read as JSON lines.
type syncBuffer struct{ syncbuf.Buffer }

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func TestEveryRPCIsLoggedWithMethodCodeDurationAndPeer(t *testing.T) {
	var buf syncBuffer
	ts := startServer(t, Options{Logger: zerolog.New(&buf), Deps: Deps{Version: "v1"}})
	client := rmspb.NewRackManagerClient(dial(t, ts.addr, nil))
	if _, err := client.GetVersion(rpcContext(t), &rmspb.GetVersionRequest{}); err != nil {
		t.Fatal(err)
	}
	_, _ = client.ListRacks(rpcContext(t), &rmspb.ListRacksRequest{})

	byRPC := rpcLines(t, &buf)
	ok := byRPC["/rack_manager.RackManager/GetVersion"]
	if ok == nil || ok["code"] != "OK" || ok["peer"] == nil || ok["duration_ms"] == nil {
		t.Fatalf("GetVersion log line = %v", ok)
	}
	// This server has no node registry, so ListRacks fails with UNAVAILABLE,
	// which is logged at warn.
	if l := byRPC["/rack_manager.RackManager/ListRacks"]; l == nil || l["code"] != "Unavailable" || l["level"] != "warn" {
		t.Fatalf("ListRacks log line = %v", l)
	}
}

// panicService is a one-method service whose handler panics, registered
// beside the RMS services to prove the interceptors guard the whole listener.
var panicService = grpc.ServiceDesc{
	ServiceName: "rmsdtest.Panic",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Boom",
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(emptypb.Empty)
			if err := dec(in); err != nil {
				return nil, err
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/rmsdtest.Panic/Boom"}
			return interceptor(ctx, in, info, func(context.Context, any) (any, error) {
				panic("detail only the log may see")
			})
		},
	}},
}

func TestHandlerPanicBecomesInternalAndServerStaysUp(t *testing.T) {
	var buf syncBuffer
	ts := startServer(t, Options{Logger: zerolog.New(&buf), Deps: Deps{Version: "v1"}}, func(s *grpc.Server) {
		s.RegisterService(&panicService, struct{}{})
	})
	conn := dial(t, ts.addr, nil)

	err := conn.Invoke(rpcContext(t), "/rmsdtest.Panic/Boom", &emptypb.Empty{}, &emptypb.Empty{})
	if status.Code(err) != codes.Internal {
		t.Fatalf("panic became %v, want INTERNAL", err)
	}
	if strings.Contains(err.Error(), "detail only") {
		t.Fatalf("the caller must not see the panic value: %v", err)
	}
	if _, err := rmspb.NewRackManagerClient(conn).GetVersion(rpcContext(t), &rmspb.GetVersionRequest{}); err != nil {
		t.Fatalf("server down after a panic: %v", err)
	}
	var panicked, logged bool
	for _, l := range buf.lines(t) {
		panicked = panicked || (l["message"] == "rpc handler panicked" && l["rpc"] == "/rmsdtest.Panic/Boom")
		logged = logged || (l["message"] == "rpc" && l["rpc"] == "/rmsdtest.Panic/Boom" && l["code"] == "Internal")
	}
	if !panicked || !logged {
		t.Fatalf("panic logged=%v, rpc line with INTERNAL=%v", panicked, logged)
	}
}
