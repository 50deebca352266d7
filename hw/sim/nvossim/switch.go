package nvossim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"
	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nmxc/nmxcpb"
)

// ErrNotLoopback is returned by Start for an address outside 127.0.0.0/8:
// the simulator never listens on a routable interface.
var ErrNotLoopback = errors.New("nvossim: listen address must be an IPv4 loopback address")

// Switch is one simulated NVOS switch host. Create it with New, bring it up
// with Start and stop it with Close. All methods are safe for concurrent use.
type Switch struct {
	cfg    Config
	log    zerolog.Logger
	tlsCrt tls.Certificate
	caPool *x509.CertPool
	hostSg ssh.Signer

	mu             sync.Mutex
	users          map[string]*user
	firmware       map[string]*component
	partitions     [2]string
	current, next  int // partition numbers 1 or 2
	fs             *memFS
	actions        map[int]*action
	running        []*action // actions not finished yet
	nextAction     int
	revisions      map[string]*revision
	nextRevision   int
	outages        []*outage
	boots          int
	saves          int
	rejectLogins   bool
	actionFailure  string
	actionSlowness float64
	rebootInstalls bool
	imageFaults    imageFaults
	revisionFail   string
	responseDelay  time.Duration
	stallAfter     int64 // -1: uploads not stalled
	stallResume    chan struct{}
	clientCAs      *x509.CertPool
	location       map[string]json.RawMessage // chassis-location overrides; empty: key left out
	nvueConns      int
	nvueRequests   int // NVUE requests that reached a live switch
	cluster        cluster
	onie           bool // no NVOS: the switch runs ONIE (onie.go)
	spdm           spdmState
	tls            tlsState

	// lifecycle
	started  bool
	closed   bool
	done     chan struct{}
	wg       sync.WaitGroup
	ip       string
	nvueLn   net.Listener
	sshLn    net.Listener
	nmxLn    net.Listener
	gnmiLn   net.Listener
	httpSrv  *http.Server
	grpcSrv  *grpc.Server // NMX-C and gNMI, one server per port
	gnmiSrv  *grpc.Server
	sshConns map[net.Conn]struct{}
}

// New builds a switch from cfg (defaults filled in) and generates its TLS
// certificate and SSH host key. It does not listen yet.
func New(cfg Config) (*Switch, error) {
	cfg = cfg.withDefaults()
	signer, err := newHostKey()
	if err != nil {
		return nil, fmt.Errorf("nvossim: ssh host key: %w", err)
	}
	s := &Switch{
		cfg:            cfg,
		log:            cfg.Logger,
		hostSg:         signer,
		users:          map[string]*user{cfg.Username: {password: cfg.Password.Reveal()}},
		firmware:       map[string]*component{},
		partitions:     [2]string{cfg.Partition1, cfg.Partition2},
		current:        1,
		next:           1,
		fs:             newMemFS(),
		actions:        map[int]*action{},
		revisions:      map[string]*revision{},
		actionSlowness: 1,
		stallAfter:     -1,
		stallResume:    make(chan struct{}),
		done:           make(chan struct{}),
		sshConns:       map[net.Conn]struct{}{},
	}
	for name, v := range cfg.Firmware {
		s.firmware[name] = &component{actual: v, installed: v}
	}
	return s, nil
}

// RequireClientCertificates makes the NVUE server demand a client
// certificate signed by one of pool's CAs (mTLS). Call it before Start.
func (s *Switch) RequireClientCertificates(pool *x509.CertPool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientCAs = pool
}

// Start listens on ip (an IPv4 loopback address) at the configured NVUE and
// SSH ports and serves until Close. ctx bounds only the start-up.
func (s *Switch) Start(ctx context.Context, ip string) error {
	addr := net.ParseIP(ip)
	if addr == nil || addr.To4() == nil || !addr.IsLoopback() {
		return fmt.Errorf("start switch on %q: %w", ip, ErrNotLoopback)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("nvossim: switch already started or closed")
	}
	if s.cfg.Certificate != nil {
		s.tlsCrt = *s.cfg.Certificate
	} else {
		crt, pool, err := selfSignedCert(s.cfg.HostName, addr)
		if err != nil {
			return fmt.Errorf("nvossim: tls certificate: %w", err)
		}
		s.tlsCrt, s.caPool = crt, pool
	}
	var lc net.ListenConfig
	nvueLn, err := lc.Listen(ctx, "tcp", net.JoinHostPort(ip, strconv.Itoa(s.cfg.NVUEPort)))
	if err != nil {
		return fmt.Errorf("nvossim: listen nvue: %w", err)
	}
	sshLn, err := lc.Listen(ctx, "tcp", net.JoinHostPort(ip, strconv.Itoa(s.cfg.SSHPort)))
	if err != nil {
		_ = nvueLn.Close()
		return fmt.Errorf("nvossim: listen ssh: %w", err)
	}
	nmxLn, err := lc.Listen(ctx, "tcp", net.JoinHostPort(ip, strconv.Itoa(s.cfg.NMXPort)))
	if err != nil {
		_, _ = nvueLn.Close(), sshLn.Close()
		return fmt.Errorf("nvossim: listen nmx-c: %w", err)
	}
	gnmiLn, err := lc.Listen(ctx, "tcp", net.JoinHostPort(ip, strconv.Itoa(s.cfg.GNMIPort)))
	if err != nil {
		_, _, _ = nvueLn.Close(), sshLn.Close(), nmxLn.Close()
		return fmt.Errorf("nvossim: listen gnmi: %w", err)
	}
	s.started, s.ip, s.nvueLn, s.sshLn, s.nmxLn, s.gnmiLn = true, ip, nvueLn, sshLn, nmxLn, gnmiLn
	tlsCfg := &tls.Config{GetCertificate: s.nvueCertificate, MinVersion: tls.VersionTLS12}
	if s.clientCAs != nil {
		tlsCfg.ClientCAs = s.clientCAs
		tlsCfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	s.httpSrv = &http.Server{
		Handler:           s.cfg.Overlaps.Middleware(s.cfg.HostName, s.nvueHandler()),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          newDiscardLogger(),
	}
	gated := &gateListener{Listener: nvueLn, sw: s}
	// The gRPC services ask for a client certificate and check it against
	// the CA they are bound to in the handlers (once bound to mTLS); each
	// presents the certificate it is bound to.
	grpcCreds := func(bound func() string) grpc.ServerOption {
		cfg := &tls.Config{GetCertificate: s.serviceCertificate(bound), MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"},
			ClientAuth: tls.RequestClientCert}
		if s.clientCAs != nil {
			cfg.ClientAuth, cfg.ClientCAs = tls.VerifyClientCertIfGiven, s.clientCAs
		}
		return grpc.Creds(sniffCreds{tls: cfg})
	}
	s.grpcSrv = grpc.NewServer(grpcCreds(func() string { return s.fabricLocked().apps[appController].certID }))
	nmxcpb.RegisterNMX_ControllerServer(s.grpcSrv, &nmxServer{sw: s})
	s.gnmiSrv = grpc.NewServer(grpcCreds(func() string { return s.tlsLocked().bindings["gnmi-server"].certificate }))
	gpb.RegisterGNMIServer(s.gnmiSrv, &gnmiServer{sw: s})
	s.wg.Add(4)
	go func() {
		defer s.wg.Done()
		_ = s.grpcSrv.Serve(&gatedListener{Listener: nmxLn, sw: s})
	}()
	go func() {
		defer s.wg.Done()
		_ = s.gnmiSrv.Serve(&gatedListener{Listener: gnmiLn, sw: s})
	}()
	go func() {
		defer s.wg.Done()
		_ = s.httpSrv.Serve(tls.NewListener(gated, tlsCfg))
	}()
	go func() {
		defer s.wg.Done()
		s.serveSSH(sshLn)
	}()
	s.log.Info().Str("ip", ip).Int("nvue_port", s.portLocked(nvueLn)).Int("ssh_port", s.portLocked(sshLn)).
		Int("nmx_port", s.portLocked(nmxLn)).Int("gnmi_port", s.portLocked(gnmiLn)).Msg("nvos switch simulator started")
	return nil
}

func (s *Switch) portLocked(ln net.Listener) int {
	if ln == nil {
		return 0
	}
	return ln.Addr().(*net.TCPAddr).Port
}

// Close stops both servers, drops every connection, releases stalled
// uploads and waits for every goroutine of the switch to end.
func (s *Switch) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	srv, sshLn, grpcSrvs := s.httpSrv, s.sshLn, []*grpc.Server{s.grpcSrv, s.gnmiSrv}
	for c := range s.sshConns {
		_ = c.Close()
	}
	s.mu.Unlock()
	var err error
	if srv != nil {
		// Shutdown waits for running handlers (they return promptly once
		// done is closed); Close is the fallback for anything still open.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if serr := srv.Shutdown(ctx); serr != nil {
			err = srv.Close()
		}
		cancel()
	}
	if sshLn != nil {
		_ = sshLn.Close()
	}
	for _, g := range grpcSrvs {
		if g != nil {
			g.Stop() // closes the listener and every connection
		}
	}
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("nvossim: close: %w", err)
	}
	return nil
}

// Endpoint is the NVUE endpoint (IP, HTTPS port, host name) with the
// switch's configured admin credentials. Valid after Start.
func (s *Switch) Endpoint() hw.Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hw.Endpoint{
		IP:          s.ip,
		HostName:    s.cfg.HostName,
		Port:        s.portLocked(s.nvueLn),
		Credentials: hw.Credentials{Username: s.cfg.Username, Password: s.cfg.Password},
	}
}

// String names the switch without revealing any credential.
func (s *Switch) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("nvossim.Switch{host=%s ip=%s nvue=%d ssh=%d}", s.cfg.HostName, s.ip, s.portLocked(s.nvueLn), s.portLocked(s.sshLn))
}

// SSHPort is the port of the SSH/SFTP server. Valid after Start.
func (s *Switch) SSHPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.portLocked(s.sshLn)
}

// NMXPort is the port of the NMX-C gRPC server. Valid after Start.
func (s *Switch) NMXPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.portLocked(s.nmxLn)
}

// GNMIPort is the port of the gNMI server. Valid after Start.
func (s *Switch) GNMIPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.portLocked(s.gnmiLn)
}

// HostKey is the SSH host public key, for a fixed-host-key client policy.
func (s *Switch) HostKey() ssh.PublicKey { return s.hostSg.PublicKey() }

// CertPool holds the NVUE server's self-signed certificate, for a client
// that verifies the server (its names are HostName and the listen IP).
// Valid after Start; nil with Config.Certificate (its issuer's pool
// verifies it).
func (s *Switch) CertPool() *x509.CertPool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caPool
}

// now returns the current time; the simulator is driven by the wall clock
// and Config.TimeScale.
func (s *Switch) now() time.Time { return time.Now() }

// isDown reports whether the switch is inside an unreachable window.
func (s *Switch) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.advanceLocked(now)
	return s.downLocked(now)
}

// gateListener drops new connections while the switch is unreachable.
type gateListener struct {
	net.Listener
	sw *Switch
}

// Accept returns the next connection accepted while the switch is up.
func (g *gateListener) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if !g.sw.isDown() {
			g.sw.countConnection()
			return c, nil
		}
		_ = c.Close()
	}
}
