// Command bare is the load harness's baseline: a bare grpc-go server that
// answers GetVersion, GetJobStatus, BatchGetPowerState and
// ApplyStoredFirmwareObject with replies recorded from a real rmsd
// (package replay), plus the standard health service. It runs as a
// process of its own so that its CPU time can be read from /proc exactly
// as rmsd's is. It prints
//
//	bare serving 127.0.0.1:PORT
//
// once it listens, and stops on SIGINT or SIGTERM.
//
// Usage:
//
//	bare -recording replies.json [-listen 127.0.0.1:0]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rmsd/rmsd/bench/replay"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

func main() {
	recording := flag.String("recording", "", "replies recorded from rmsd (written by the load harness)")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	if err := run(*recording, *listen); err != nil {
		fmt.Fprintf(os.Stderr, "bare: %v\n", err)
		os.Exit(1)
	}
}

func run(recording, listen string) error {
	rec, err := replay.Load(recording)
	if err != nil {
		return err
	}
	srv, err := replay.NewServer(rec)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	g := grpc.NewServer()
	rmspb.RegisterRackManagerServer(g, srv)
	healthpb.RegisterHealthServer(g, health.NewServer())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		g.GracefulStop()
	}()
	fmt.Printf("bare serving %s\n", lis.Addr())
	if err := g.Serve(lis); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
