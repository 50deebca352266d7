package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Exit codes.
const (
	exitServing    = 0
	exitNotServing = 1
	exitUsage      = 2
)

// probeFlags are rmsprobe's command-line flags.
type probeFlags struct {
	addr       string
	service    string
	timeout    time.Duration
	caFile     string
	certFile   string
	keyFile    string
	serverName string
}

// probe runs one health check and returns the exit code. Every flag but
// --timeout defaults to its RMSPROBE_* variable in environ (RMSPROBE_ADDR,
// RMSPROBE_CA, ...), so an image's fixed health-check command can be
// pointed at mTLS material by the environment of the container.
func probe(args, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rmsprobe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name && v != "" {
				return v
			}
		}
		return def
	}
	var f probeFlags
	fs.StringVar(&f.addr, "addr", env("RMSPROBE_ADDR", "127.0.0.1:8801"), "host:port of the gRPC server (RMSPROBE_ADDR)")
	fs.StringVar(&f.service, "service", env("RMSPROBE_SERVICE", ""), "service name to ask about, empty for the server as a whole (RMSPROBE_SERVICE)")
	fs.DurationVar(&f.timeout, "timeout", 3*time.Second, "deadline of the whole check")
	fs.StringVar(&f.caFile, "ca", env("RMSPROBE_CA", ""), "PEM file of the CA that signed the server certificate; enables mTLS (RMSPROBE_CA)")
	fs.StringVar(&f.certFile, "cert", env("RMSPROBE_CERT", ""), "PEM client certificate presented with --ca (RMSPROBE_CERT)")
	fs.StringVar(&f.keyFile, "key", env("RMSPROBE_KEY", ""), "PEM private key of --cert (RMSPROBE_KEY)")
	fs.StringVar(&f.serverName, "server-name", env("RMSPROBE_SERVER_NAME", ""),
		"name the server certificate must carry; default the host of --addr (RMSPROBE_SERVER_NAME)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitServing
		}
		return exitUsage
	}
	creds, err := f.credentials()
	if err != nil {
		fmt.Fprintf(stderr, "rmsprobe: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	status, err := check(ctx, f.addr, f.service, creds)
	if err != nil {
		fmt.Fprintf(stderr, "rmsprobe: %s: %v\n", f.addr, err)
		return exitNotServing
	}
	fmt.Fprintf(stdout, "%s: %s\n", f.addr, status)
	if status != healthpb.HealthCheckResponse_SERVING {
		return exitNotServing
	}
	return exitServing
}

// credentials are plaintext without --ca, else mTLS with the client
// certificate; --cert and --key without --ca (or the reverse) is a mistake.
func (f probeFlags) credentials() (credentials.TransportCredentials, error) {
	if f.caFile == "" && f.certFile == "" && f.keyFile == "" {
		return insecure.NewCredentials(), nil
	}
	if f.caFile == "" || f.certFile == "" || f.keyFile == "" {
		return nil, errors.New("--ca, --cert and --key go together (rmsd accepts TLS only with a client certificate)")
	}
	caPEM, err := os.ReadFile(f.caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("--ca %s: no PEM certificate", f.caFile)
	}
	cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--cert/--key: %w", err)
	}
	return credentials.NewTLS(&tls.Config{
		MinVersion:   tls.VersionTLS13,
		RootCAs:      pool,
		Certificates: []tls.Certificate{cert},
		ServerName:   f.serverName,
	}), nil
}

// check asks addr's health service about service once.
func check(ctx context.Context, addr, service string, creds credentials.TransportCredentials) (healthpb.HealthCheckResponse_ServingStatus, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	if err != nil {
		return 0, err
	}
	return resp.GetStatus(), nil
}
