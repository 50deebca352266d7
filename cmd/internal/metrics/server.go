package metrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// Server is the /metrics listener.
type Server struct {
	lis    net.Listener
	http   *http.Server
	served chan struct{}
}

// Route is one more handler the metrics listener serves beside /metrics
// (the web console), with its http.ServeMux pattern.
type Route struct {
	Pattern string
	Handler http.Handler
}

// Listen binds addr and serves h at /metrics, and every extra route, over
// TLS when tlsConfig is set. A port in use fails here, so the daemon's
// start fails with it.
func Listen(addr string, tlsConfig *tls.Config, h http.Handler, log zerolog.Logger, extra ...Route) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	if tlsConfig != nil {
		lis = tls.NewListener(lis, tlsConfig)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	for _, r := range extra {
		mux.Handle(r.Pattern, r.Handler)
	}
	s := &Server{lis: lis, served: make(chan struct{}),
		http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(s.served)
		if err := s.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("metrics listener stopped")
		}
	}()
	return s, nil
}

// Addr is the bound address (the port chosen for port 0).
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Close stops serving: scrapes under way may finish until ctx ends, then
// the listener and its connections are closed. Safe on a nil Server.
func (s *Server) Close(ctx context.Context) {
	if s == nil {
		return
	}
	if err := s.http.Shutdown(ctx); err != nil {
		_ = s.http.Close()
	}
	<-s.served
}
