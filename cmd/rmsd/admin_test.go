package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rmsd/rmsd/grpc/adminpb"
)

func TestAdminServiceServesOnLoopbackWhenEnabled(t *testing.T) {
	d := startRun(t, []string{"RMS_ALLOW_INSECURE=1", "RMS_ADMIN__ENABLED=true", "RMS_ADMIN__PORT=0"},
		"--config", writeFile(t, insecureLoopback))
	addr, _ := logLine(t, d.stdout.String(), "admin service serving: it can kill job engine actors")["addr"].(string)
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("admin address %q in the log:\n%s", addr, d.stdout.String())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := adminpb.NewAdminClient(conn).ListActors(ctx, &adminpb.ListActorsRequest{Kind: "registry"})
	if err != nil || len(l.GetActors()) != 1 {
		t.Fatalf("ListActors = %v, %v", l, err)
	}
	stopRun(t, d)
}

func TestAdminServiceIsOffByDefaultAndNeverExposed(t *testing.T) {
	d := startRun(t, []string{"RMS_ALLOW_INSECURE=1"}, "--config", writeFile(t, insecureLoopback))
	if strings.Contains(d.stdout.String(), "admin service serving") {
		t.Fatal("the admin service started without [admin] enabled")
	}
	stopRun(t, d)

	var stdout, stderr lockedBuffer
	code := run(context.Background(), runOptions{
		Args:    []string{"--config", writeFile(t, insecureLoopback)},
		Environ: withStorage(t, []string{"RMS_ALLOW_INSECURE=1", "RMS_ADMIN__ENABLED=true", "RMS_ADMIN__BIND_ADDRESS=0.0.0.0"}),
		Stdout:  &stdout, Stderr: &stderr,
	})
	if code != 1 || !strings.Contains(stderr.String(), "admin.bind_address") {
		t.Fatalf("admin on all interfaces: exit %d, stderr %q", code, stderr.String())
	}
}
