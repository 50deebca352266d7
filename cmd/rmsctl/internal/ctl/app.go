package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// Streams are the standard streams of one rmsctl run.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// app is one rmsctl run: its settings, streams and (once a command needs
// it) its connection to rmsd.
type app struct {
	target     target
	configPath string
	output     string
	streams    Streams

	conn   *grpc.ClientConn
	client rmspb.RackManagerClient
}

// Main runs rmsctl with args (without the program name) and returns its
// exit code. ctx ends a run early (SIGINT, SIGTERM).
func Main(ctx context.Context, args []string, s Streams) int {
	a := &app{streams: s}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	err := root.ExecuteContext(ctx)
	if a.conn != nil {
		_ = a.conn.Close()
	}
	if err != nil {
		fmt.Fprintf(safeWriter{s.Err}, "rmsctl: %v\n", err)
	}
	return exitCode(err)
}

// rootCommand builds the whole command tree with its global flags.
func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "rmsctl",
		Short: "Operate rmsd, the rack management daemon, over its gRPC API",
		Long: `rmsctl calls rmsd's rack_manager.RackManager API: racks and nodes, power,
device info, firmware inventory, the firmware catalog, firmware and switch image
applies, switch passwords, cold reboots, the scale-up fabric, and jobs, which
"jobs watch" follows with a live progress view; and rmsd's own read service
(rmsd_ops.Ops): "jobs list" and "audit list".

The target comes from the global flags, else from the config file
($XDG_CONFIG_HOME/rmsctl/config.toml, or --config), else the defaults.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: a.prepare,
		// --version prints rmsctl's own build without dialling rmsd;
		// the version command adds rmsd's.
		Version: buildinfo.Version(),
	}
	root.SetVersionTemplate(buildinfo.Describe("rmsctl"))
	root.Flags().Bool("version", false, "print rmsctl's version, commit and Go version, and exit")
	root.CompletionOptions.DisableDefaultCmd = true
	f := root.PersistentFlags()
	a.target.Timeout = duration(defaultTimeout)
	f.StringVar(&a.target.Addr, "addr", defaultAddr, "host:port of rmsd's gRPC listener")
	f.BoolVar(&a.target.TLS, "tls", false, "use TLS (implied by --ca and --cert)")
	f.StringVar(&a.target.CA, "ca", "", "PEM file of the CA that signed rmsd's certificate (default: the system roots)")
	f.StringVar(&a.target.Cert, "cert", "", "PEM client certificate, for rmsd's mTLS listener")
	f.StringVar(&a.target.Key, "key", "", "PEM private key of --cert")
	f.StringVar(&a.target.ServerName, "server-name", "", "name expected in rmsd's certificate (default: the host of --addr)")
	f.StringVar(&a.configPath, "config", "", "config file with the target settings (default $XDG_CONFIG_HOME/rmsctl/config.toml)")
	f.StringVarP(&a.output, "output", "o", "text", "output format: text or json (protobuf JSON, one reply per line)")
	f.Var(&a.target.Timeout, "timeout", "deadline of each RPC")
	root.AddCommand(
		a.versionCommand(),
		a.racksCommand(),
		a.nodesCommand(),
		a.powerCommand(),
		a.deviceInfoCommand(),
		a.firmwareCommand(),
		a.switchCommand(),
		a.coldRebootCommand(),
		a.fabricCommand(),
		a.jobsCommand(),
		a.auditCommand(),
		a.callCommand(),
	)
	return root
}

// prepare completes the settings of a command about to run: the config
// file under the flags, and the output format.
func (a *app) prepare(cmd *cobra.Command, _ []string) error {
	path, explicit := a.configPath, a.configPath != ""
	if !explicit {
		path = defaultConfigPath()
	}
	if err := loadConfig(path, explicit, &a.target, cmd.Flags()); err != nil {
		return err
	}
	if a.output != "text" && a.output != "json" {
		return usageError("-o %q: want text or json", a.output)
	}
	return a.target.check()
}

// rms is the RackManager client, dialled on first use.
func (a *app) rms() (rmspb.RackManagerClient, error) {
	if a.client != nil {
		return a.client, nil
	}
	conn, err := a.target.dial()
	if err != nil {
		return nil, err
	}
	a.conn, a.client = conn, rmspb.NewRackManagerClient(conn)
	return a.client, nil
}

// rpcContext bounds one RPC by --timeout.
func (a *app) rpcContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, time.Duration(a.target.Timeout))
}

// call runs one RPC (a method expression such as
// rmspb.RackManagerClient.GetVersion) under --timeout and turns its error
// into rmsctl's.
func call[Req, Resp any](ctx context.Context, a *app, rpc string, req Req,
	method func(rmspb.RackManagerClient, context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	var resp Resp
	err := a.invoke(ctx, rpc, func(rctx context.Context, client rmspb.RackManagerClient) (err error) {
		resp, err = method(client, rctx, req)
		return err
	})
	return resp, err
}

// invoke runs one RPC (do) under --timeout on rmsd's connection and turns
// its error into rmsctl's: interrupted (130) when ctx ended, else the
// gRPC status.
func (a *app) invoke(ctx context.Context, rpc string, do func(context.Context, rmspb.RackManagerClient) error) error {
	client, err := a.rms()
	if err != nil {
		return err
	}
	rctx, cancel := a.rpcContext(ctx)
	defer cancel()
	if err := do(rctx, client); err != nil {
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("%s: interrupted", rpc)}
		}
		return rpcError(a, rpc, err)
	}
	return nil
}

// inBand is the error of an in-band FAILURE reply (nil otherwise).
func inBand(rpc string, code rmspb.ReturnCode, message string) error {
	if code != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		return nil
	}
	if strings.TrimSpace(message) == "" {
		message = "no message"
	}
	return failed("%s: FAILURE: %s", rpc, message)
}

// firstFailure joins the errors of a per-node loop into one exit error:
// the first one's exit code, every message.
func firstFailure(errs []error) error {
	errs = compact(errs)
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return &exitError{code: exitCode(errs[0]), err: errors.Join(errs...)}
}

func compact(errs []error) []error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// stdoutIsTerminal says whether the output is a terminal (a live view is
// drawn then).
func (a *app) stdoutIsTerminal() (*os.File, bool) {
	f, ok := a.streams.Out.(*os.File)
	return f, ok && isTerminal(f)
}
