package launch

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthPoll is how often Dial asks health again.
const healthPoll = 50 * time.Millisecond

// Connect makes a plaintext gRPC client of addr without waiting for it.
func Connect(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return conn, nil
}

// Dial connects to addr (plaintext) and waits, up to timeout, until its
// health service answers SERVING for the whole server.
func Dial(ctx context.Context, addr string, timeout time.Duration, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	conn, err := Connect(addr, opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := healthpb.NewHealthClient(conn)
	for {
		resp, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("health of %s: not SERVING (%v)", addr, err)
		case <-time.After(healthPoll):
		}
	}
}
