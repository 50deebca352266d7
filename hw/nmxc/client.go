package nmxc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nmxc/nmxcpb"
	"github.com/rmsd/rmsd/hw/pause"
)

// Upstream's values.
const (
	DefaultPort           = 9370
	DefaultGatewayID      = "rack-manager-grpc-client"
	DefaultConnectTimeout = 30 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultHelloAttempts  = 3
	DefaultHelloRetry     = 2 * time.Second
)

// ErrNotSuccess: NMX-C answered, but its server header's return code is not
// NMX_ST_SUCCESS (see *ReturnCodeError).
var ErrNotSuccess = errors.New("nmxc: call not successful")

// ReturnCodeError is a reply whose server header is not NMX_ST_SUCCESS.
type ReturnCodeError struct {
	Method string
	Code   nmxcpb.ST_ReturnCode
}

// Error names the method and the return code.
func (e *ReturnCodeError) Error() string {
	return fmt.Sprintf("nmx-c %s returned %s", e.Method, e.Code)
}

// Is matches ErrNotSuccess.
func (e *ReturnCodeError) Is(target error) bool { return target == ErrNotSuccess }

// Options configure a client. The zero value is upstream's: port 9370,
// gateway id rack-manager-grpc-client, plaintext, 30 s connect and per-RPC
// deadlines, Hello tried 3 times 2 s apart.
type Options struct {
	// Port is the NMX-C port ([switches] nmx_port).
	Port int
	// GatewayID is sent on every request ([switches] nmx_gateway_id).
	GatewayID string
	// TLS secures the connection (mTLS when it carries a client
	// certificate); nil means plaintext ([switches] insecure_switch).
	TLS *tls.Config
	// ConnectTimeout bounds establishing the connection; RequestTimeout is
	// the deadline of each call.
	ConnectTimeout time.Duration
	RequestTimeout time.Duration
	// HelloAttempts and HelloRetry pace the retries of Hello on gRPC
	// Unavailable.
	HelloAttempts int
	HelloRetry    time.Duration
}

func (o Options) withDefaults() Options {
	if o.Port <= 0 {
		o.Port = DefaultPort
	}
	if o.GatewayID == "" {
		o.GatewayID = DefaultGatewayID
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.HelloAttempts <= 0 {
		o.HelloAttempts = DefaultHelloAttempts
	}
	if o.HelloRetry <= 0 {
		o.HelloRetry = DefaultHelloRetry
	}
	return o
}

// Client talks to the NMX-C of one switch. It connects lazily, on the first
// call; Close releases the connection. It is safe for concurrent use.
type Client struct {
	opts Options
	addr string
	conn *grpc.ClientConn
	api  nmxcpb.NMX_ControllerClient
}

// New builds a client for the switch at ep's address (its IP, else its host
// name) on Options.Port. ep's credentials are not used: NMX-C
// authenticates by mTLS only.
func New(ep hw.Endpoint, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	if ep.Host() == "" {
		return nil, errors.New("nmx-c client: endpoint has no IP or host name")
	}
	addr := net.JoinHostPort(ep.Host(), strconv.Itoa(opts.Port))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(TransportCredentials(ep, opts.TLS)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: opts.ConnectTimeout}))
	if err != nil {
		return nil, fmt.Errorf("nmx-c client for %s: %w", addr, err)
	}
	return &Client{opts: opts, addr: addr, conn: conn, api: nmxcpb.NewNMX_ControllerClient(conn)}, nil
}

// TransportCredentials are the gRPC transport credentials of a switch
// service at ep (NMX-C, gNMI): plaintext when cfg is nil, else TLS with a
// copy of cfg whose empty ServerName is ep's host name, else its IP.
func TransportCredentials(ep hw.Endpoint, cfg *tls.Config) credentials.TransportCredentials {
	if cfg == nil {
		return insecure.NewCredentials()
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = ep.Host()
		if ep.HostName != "" {
			cfg.ServerName = ep.HostName
		}
	}
	return credentials.NewTLS(cfg)
}

// Close releases the connection.
func (c *Client) Close() error { return c.conn.Close() }

// call runs one RPC within the per-call deadline and checks the server
// header of its reply.
func call[T interface{ GetServerHeader() *nmxcpb.ServerHeader }](ctx context.Context, c *Client, method string, f func(ctx context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	out, err := f(ctx)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("nmx-c %s on %s: %w", method, c.addr, err)
	}
	if code := out.GetServerHeader().GetReturnCode(); code != nmxcpb.ST_ReturnCode_NMX_ST_SUCCESS {
		var zero T
		return zero, fmt.Errorf("on %s: %w", c.addr, &ReturnCodeError{Method: method, Code: code})
	}
	return out, nil
}

// Hello greets the controller with the gateway id and protocol version
// 2.5. It is retried, HelloRetry apart and at most HelloAttempts times,
// while the answer is gRPC Unavailable; any other failure ends it.
func (c *Client) Hello(ctx context.Context) (*nmxcpb.ServerHeader, error) {
	req := &nmxcpb.HelloRequest{
		GatewayId:    c.opts.GatewayID,
		MajorVersion: nmxcpb.ProtoMsgMajorVersion_NMX_MSG_MAJOR_VERSION_CURRENT,
		MinorVersion: nmxcpb.ProtoMsgMinorVersion_NMX_MSG_MINOR_VERSION_CURRENT,
	}
	for attempt := 1; ; attempt++ {
		resp, err := call(ctx, c, "Hello", func(ctx context.Context) (*nmxcpb.HelloResponse, error) {
			return c.api.Hello(ctx, req)
		})
		if err == nil {
			return resp.GetServerHeader(), nil
		}
		if status.Code(err) != codes.Unavailable || attempt >= c.opts.HelloAttempts {
			if attempt > 1 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, err
		}
		if perr := pause.For(ctx, c.opts.HelloRetry); perr != nil {
			return nil, fmt.Errorf("nmx-c Hello on %s: %w (last error: %v)", c.addr, perr, err)
		}
	}
}

// Key names one static config entry.
type Key struct {
	File string
	Key  string
}

// Entry is one static config entry with its value.
type Entry struct {
	File  string
	Key   string
	Value string
}

// GetStaticConfig asks for the given keys and whole files and returns every
// entry the controller reported, from both places a reply may carry them,
// in reply order without duplicates.
func (c *Client) GetStaticConfig(ctx context.Context, keys []Key, files []string) ([]Entry, error) {
	req := &nmxcpb.GetStaticConfigRequest{GatewayId: c.opts.GatewayID, Context: &nmxcpb.Context{}}
	if len(keys) > 0 {
		req.ConfigKeys = &nmxcpb.ConfigKeys{}
		for _, k := range keys {
			req.ConfigKeys.ConfigKey = append(req.ConfigKeys.ConfigKey, &nmxcpb.ConfigKey{ConfigFileName: k.File, Key: k.Key})
		}
	}
	if len(files) > 0 {
		req.ConfigFiles = &nmxcpb.ConfigFiles{}
		for _, f := range files {
			req.ConfigFiles.ConfigFile = append(req.ConfigFiles.ConfigFile, &nmxcpb.ConfigFile{ConfigFileName: f})
		}
	}
	resp, err := call(ctx, c, "GetStaticConfig", func(ctx context.Context) (*nmxcpb.GetStaticConfigResponse, error) {
		return c.api.GetStaticConfig(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	var out []Entry
	seen := map[Key]bool{}
	for _, kvs := range []*nmxcpb.ConfigKeyVals{resp.GetStaticConfig().GetConfigKeyVals(), resp.GetConfigKeyVals()} {
		for _, kv := range kvs.GetConfigKeyVal() {
			k := Key{File: kv.GetConfigFileName(), Key: kv.GetKey()}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, Entry{File: k.File, Key: k.Key, Value: kv.GetValue()})
		}
	}
	return out, nil
}

// SetStaticConfig sets entries in one call.
func (c *Client) SetStaticConfig(ctx context.Context, entries []Entry) error {
	kvs := &nmxcpb.ConfigKeyVals{}
	for _, e := range entries {
		kvs.ConfigKeyVal = append(kvs.ConfigKeyVal, &nmxcpb.ConfigKeyVal{ConfigFileName: e.File, Key: e.Key, Value: e.Value})
	}
	req := &nmxcpb.SetStaticConfigRequest{GatewayId: c.opts.GatewayID,
		StaticConfig: &nmxcpb.StaticConfig{Context: &nmxcpb.Context{}, ConfigKeyVals: kvs}}
	_, err := call(ctx, c, "SetStaticConfig", func(ctx context.Context) (*nmxcpb.ReturnCode, error) {
		return c.api.SetStaticConfig(ctx, req)
	})
	return err
}

// DomainState reads the controller's health and control-plane state.
func (c *Client) DomainState(ctx context.Context) (*nmxcpb.DomainStateInfo, error) {
	return call(ctx, c, "GetDomainStateInfo", func(ctx context.Context) (*nmxcpb.DomainStateInfo, error) {
		return c.api.GetDomainStateInfo(ctx, &nmxcpb.DomainStateInfoRequest{GatewayId: c.opts.GatewayID})
	})
}

// Topology reads the fabric's devices and ports.
func (c *Client) Topology(ctx context.Context) (*nmxcpb.TopologyInfo, error) {
	return call(ctx, c, "GetTopologyInfo", func(ctx context.Context) (*nmxcpb.TopologyInfo, error) {
		return c.api.GetTopologyInfo(ctx, &nmxcpb.TopologyInfoRequest{GatewayId: c.opts.GatewayID})
	})
}

// ComputeNodes lists the compute trays the fabric sees.
func (c *Client) ComputeNodes(ctx context.Context) (*nmxcpb.ComputeNodeInfoList, error) {
	return call(ctx, c, "GetComputeNodeInfoList", func(ctx context.Context) (*nmxcpb.ComputeNodeInfoList, error) {
		return c.api.GetComputeNodeInfoList(ctx, &nmxcpb.NodeInfoListRequest{GatewayId: c.opts.GatewayID})
	})
}

// SwitchNodes lists the switch trays the fabric sees.
func (c *Client) SwitchNodes(ctx context.Context) (*nmxcpb.SwitchNodeInfoList, error) {
	return call(ctx, c, "GetSwitchNodeInfoList", func(ctx context.Context) (*nmxcpb.SwitchNodeInfoList, error) {
		return c.api.GetSwitchNodeInfoList(ctx, &nmxcpb.NodeInfoListRequest{GatewayId: c.opts.GatewayID})
	})
}
