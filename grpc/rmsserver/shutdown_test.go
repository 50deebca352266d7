package rmsserver

import (
	"context"
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

// blockingService has one method that signals when it starts and returns
// when release is closed or its context ends.
func blockingService(started chan<- struct{}, release <-chan struct{}) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "rmsdtest.Slow",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Wait",
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				if err := dec(new(emptypb.Empty)); err != nil {
					return nil, err
				}
				started <- struct{}{}
				select {
				case <-release:
					return &emptypb.Empty{}, nil
				case <-ctx.Done():
					return nil, status.FromContextError(ctx.Err()).Err()
				}
			},
		}},
	}
}

func TestShutdownLetsInFlightRPCFinish(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	ts := startServer(t, Options{Logger: zerolog.Nop()}, func(s *grpc.Server) {
		s.RegisterService(blockingService(started, release), struct{}{})
	})
	conn := dial(t, ts.addr, nil)
	rpcErr := make(chan error, 1)
	go func() {
		rpcErr <- conn.Invoke(context.Background(), "/rmsdtest.Slow/Wait", &emptypb.Empty{}, &emptypb.Empty{})
	}()
	<-started

	stopped := make(chan struct{})
	go func() {
		ts.Shutdown(context.Background())
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("Shutdown returned while an RPC was in flight")
	case err := <-rpcErr:
		t.Fatalf("in-flight RPC ended before it was released: %v", err)
	default:
	}
	close(release)
	if err := <-rpcErr; err != nil {
		t.Fatalf("in-flight RPC failed during graceful shutdown: %v", err)
	}
	<-stopped
}

func TestShutdownCutsRPCsStillRunningAfterTheGracePeriod(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	ts := startServer(t, Options{Logger: zerolog.Nop()}, func(s *grpc.Server) {
		s.RegisterService(blockingService(started, release), struct{}{})
	})
	conn := dial(t, ts.addr, nil)
	rpcErr := make(chan error, 1)
	go func() {
		rpcErr <- conn.Invoke(context.Background(), "/rmsdtest.Slow/Wait", &emptypb.Empty{}, &emptypb.Empty{})
	}()
	<-started

	grace, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ts.Shutdown(grace)
	err := <-rpcErr
	if code := status.Code(err); code != codes.Unavailable && code != codes.Canceled {
		t.Fatalf("RPC cut by shutdown answered %v, want UNAVAILABLE or CANCELED", err)
	}
}

func TestNewConnectionsAreRefusedAfterShutdown(t *testing.T) {
	ts := startServer(t, Options{Logger: zerolog.Nop()})
	ts.Shutdown(context.Background())
	conn := dial(t, ts.addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := conn.Invoke(ctx, "/rack_manager.RackManager/GetVersion", &emptypb.Empty{}, &emptypb.Empty{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("RPC after shutdown = %v, want UNAVAILABLE", err)
	}
}

// TestMarkNotServingKeepsAcceptingConnections: during a drain delay, a
// client that connects only now (a probe, a load balancer) still gets in,
// health answers NOT_SERVING, and ordinary RPCs are still served.
func TestMarkNotServingKeepsAcceptingConnections(t *testing.T) {
	ts := startServer(t, Options{Logger: zerolog.Nop(), Deps: Deps{Version: "v1"}})
	ts.MarkNotServing()

	conn := dial(t, ts.addr, nil)
	for _, svc := range append([]string{""}, serviceNames...) {
		resp, err := healthpb.NewHealthClient(conn).Check(rpcContext(t), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("Check(%q) on a new connection after MarkNotServing: %v", svc, err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("Check(%q) = %v, want NOT_SERVING", svc, resp.GetStatus())
		}
	}
	if _, err := rmspb.NewRackManagerClient(conn).GetVersion(rpcContext(t), &rmspb.GetVersionRequest{}); err != nil {
		t.Fatalf("GetVersion after MarkNotServing: %v", err)
	}
}
