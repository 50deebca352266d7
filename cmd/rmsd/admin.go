package main

import (
	"fmt"
	"net"
	"strconv"

	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/adminserver"
)

// adminService is the running admin service: its listener and server.
type adminService struct {
	lis    net.Listener
	server *adminserver.Server
	done   chan struct{}
}

// startAdmin serves the admin service when [admin] enabled, on its loopback
// address only, with interceptors (the audit log) around every call. A listener that resolves to anything else (a host name
// that is not loopback) refuses the start.
func startAdmin(cfg config.Admin, engine adminserver.Engine, log logging.Logger, interceptors ...grpc.UnaryServerInterceptor) (*adminService, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	addr := net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.Port))
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin service: listen on %s: %w", addr, err)
	}
	if tcp, ok := lis.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		lis.Close()
		return nil, fmt.Errorf("admin service: %s is not a loopback address", lis.Addr())
	}
	l := log.Component("admin")
	a := &adminService{lis: lis, server: adminserver.New(engine, l, interceptors...), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		if err := a.server.Serve(lis); err != nil {
			l.Error().Err(err).Msg("admin service stopped")
		}
	}()
	l.Warn().Str("addr", lis.Addr().String()).Msg("admin service serving: it can kill job engine actors")
	return a, nil
}

// stop closes the admin service and waits for its server to end.
func (a *adminService) stop() {
	if a == nil {
		return
	}
	a.server.Stop()
	<-a.done
}
