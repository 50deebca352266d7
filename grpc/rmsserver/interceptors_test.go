package rmsserver

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// rpcLines returns the per-RPC log lines in buf by method.
func rpcLines(t *testing.T, buf *syncBuffer) map[string]map[string]any {
	t.Helper()
	byRPC := map[string]map[string]any{}
	for _, l := range buf.lines(t) {
		if rpc, ok := l["rpc"].(string); ok && l["message"] == "rpc" {
			byRPC[rpc] = l
		}
	}
	return byRPC
}

// slowService has one method that takes at least its delay, going through
// the server's interceptors like a generated handler.
func slowService(delay time.Duration) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "rmsdtest.Timed",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Take",
			Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
				in := new(emptypb.Empty)
				if err := dec(in); err != nil {
					return nil, err
				}
				info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/rmsdtest.Timed/Take"}
				return interceptor(ctx, in, info, func(context.Context, any) (any, error) {
					<-time.After(delay) // the work being timed, not synchronisation
					return &emptypb.Empty{}, nil
				})
			},
		}},
	}
}

// TestRPCDurationIsLoggedInMilliseconds: an RPC that takes at least 40 ms
// logs duration_ms between 40 and what the caller measured around it, so
// the number is in milliseconds (seconds would be below 1, microseconds
// above the caller's figure).
func TestRPCDurationIsLoggedInMilliseconds(t *testing.T) {
	const minimum = 40 * time.Millisecond
	var buf syncBuffer
	ts := startServer(t, Options{Logger: zerolog.New(&buf)}, func(s *grpc.Server) {
		s.RegisterService(slowService(minimum), struct{}{})
	})
	conn := dial(t, ts.addr, nil)
	began := time.Now()
	if err := conn.Invoke(rpcContext(t), "/rmsdtest.Timed/Take", &emptypb.Empty{}, &emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	callerMS := float64(time.Since(began)) / float64(time.Millisecond)

	line := rpcLines(t, &buf)["/rmsdtest.Timed/Take"]
	got, ok := line["duration_ms"].(float64)
	if !ok {
		t.Fatalf("rpc line has no numeric duration_ms: %v", line)
	}
	if got < float64(minimum/time.Millisecond) || got > callerMS {
		t.Fatalf("duration_ms = %v, want between %v and the caller's %.3f", got, minimum/time.Millisecond, callerMS)
	}
	if _, unitless := line["duration"]; unitless {
		t.Errorf("rpc line still has a unitless duration: %v", line)
	}
}

// TestStatusPollsAreLoggedAtDebug: the four job-status RPCs, which callers
// repeat while they wait, and the health check, which probes repeat, log at
// debug; other RPCs at info; a poll the server fails is still a warning.
func TestStatusPollsAreLoggedAtDebug(t *testing.T) {
	var buf syncBuffer
	ts := startServer(t, Options{Logger: zerolog.New(&buf).Level(zerolog.DebugLevel), Deps: Deps{Version: "v1", Jobs: newTestEngine(t)}})
	conn := dial(t, ts.addr, nil)
	client := rmspb.NewRackManagerClient(conn)
	ctx := rpcContext(t)
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	_, _ = client.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: "j1"})
	_, _ = client.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: "j1"})
	_, _ = client.GetSwitchSystemImageJobStatus(ctx, &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: "j1"})
	_, _ = client.GetConfigureSwitchCertificateJobStatus(ctx, &rmspb.GetConfigureSwitchCertificateJobStatusRequest{JobId: "j1"})
	if _, err := client.GetVersion(ctx, &rmspb.GetVersionRequest{}); err != nil {
		t.Fatal(err)
	}

	var failing syncBuffer
	noEngine := startServer(t, Options{Logger: zerolog.New(&failing).Level(zerolog.DebugLevel)})
	_, _ = rmspb.NewRackManagerClient(dial(t, noEngine.addr, nil)).GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: "j1"})

	lines := rpcLines(t, &buf)
	for _, method := range []string{
		rmspb.RackManager_GetJobStatus_FullMethodName,
		rmspb.RackManager_GetFirmwareJobStatus_FullMethodName,
		rmspb.RackManager_GetSwitchSystemImageJobStatus_FullMethodName,
		rmspb.RackManager_GetConfigureSwitchCertificateJobStatus_FullMethodName,
		healthpb.Health_Check_FullMethodName,
	} {
		if l := lines[method]; l == nil || l["level"] != "debug" {
			t.Errorf("%s logged as %v, want a debug line", method, l)
		}
	}
	if l := lines[rmspb.RackManager_GetVersion_FullMethodName]; l == nil || l["level"] != "info" {
		t.Errorf("GetVersion logged as %v, want an info line", l)
	}
	if l := rpcLines(t, &failing)[rmspb.RackManager_GetJobStatus_FullMethodName]; l == nil || l["level"] != "warn" || l["code"] != "Unavailable" {
		t.Errorf("a status poll the server failed logged as %v, want a warn line with Unavailable", l)
	}
}

// rpcRecord is one call of an RPCObserver.
type rpcRecord struct {
	service, method string
	code            codes.Code
}

// TestObserverSeesEveryRPCWithItsCode: with ObserveRPC set, each RPC is
// reported once, split into service and method, with the code its caller
// got; the duration is never negative.
func TestObserverSeesEveryRPCWithItsCode(t *testing.T) {
	var mu sync.Mutex
	var seen []rpcRecord
	observe := func(service, method string, code codes.Code, elapsed time.Duration) {
		if elapsed < 0 {
			t.Errorf("%s/%s: negative duration %v", service, method, elapsed)
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, rpcRecord{service, method, code})
	}
	ts := startServer(t, Options{Logger: zerolog.Nop(), ObserveRPC: observe, Deps: Deps{Version: "v1", Jobs: newTestEngine(t)}})
	client := rmspb.NewRackManagerClient(dial(t, ts.addr, nil))
	ctx := rpcContext(t)
	if _, err := client.GetVersion(ctx, &rmspb.GetVersionRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("GetJobStatus without an id: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	want := []rpcRecord{
		{"rack_manager.RackManager", "GetVersion", codes.OK},
		{"rack_manager.RackManager", "GetJobStatus", codes.InvalidArgument},
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("observed %v, want %v", seen, want)
	}
}

func TestSplitMethod(t *testing.T) {
	tests := []struct {
		give, wantService, wantMethod string
	}{
		{"/rack_manager.RackManager/GetVersion", "rack_manager.RackManager", "GetVersion"},
		{"/grpc.health.v1.Health/Watch", "grpc.health.v1.Health", "Watch"},
		{"odd", "unknown", "odd"},
	}
	for _, tt := range tests {
		service, method := splitMethod(tt.give)
		if service != tt.wantService || method != tt.wantMethod {
			t.Errorf("splitMethod(%q) = %q, %q; want %q, %q", tt.give, service, method, tt.wantService, tt.wantMethod)
		}
	}
}
