package nvssvtsim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rmsd/rmsd/hw/nvssvt"
)

// Command is the command word under which rmsd runs the stand-in: `rmsd
// nvssvt-sim <arguments>` is `nvssvt-sim <arguments>`.
const Command = "nvssvt-sim"

// requestTimeout bounds one Redfish request, unless --request-timeout
// says otherwise.
const requestTimeout = 15 * time.Second

// options are the parsed command line.
type options struct {
	dutID, bmc, host, logDir, report, override string
	requestTimeout                             time.Duration
}

// Main runs the stand-in with args (without the program name) and returns
// its exit status.
func Main(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "nvssvt-sim: %v\n", err)
		return nvssvt.ExitUsage
	}
	env := envMap(environ)
	user, pass := env[nvssvt.EnvBMCUsername], env[nvssvt.EnvBMCPassword]
	if user == "" || pass == "" {
		fmt.Fprintf(stderr, "nvssvt-sim: %s and %s must be set\n", nvssvt.EnvBMCUsername, nvssvt.EnvBMCPassword)
		return nvssvt.ExitUsage
	}
	skip, err := overrideSkips(o.override)
	if err != nil {
		fmt.Fprintf(stderr, "nvssvt-sim: --config-override: %v\n", err)
		return nvssvt.ExitUsage
	}
	if o.logDir != "" {
		if err := writeJSON(filepath.Join(o.logDir, "argv.json"), append([]string{Command}, args...)); err != nil {
			fmt.Fprintf(stderr, "nvssvt-sim: %v\n", err)
			return nvssvt.ExitUsage
		}
	}
	c := &client{base: "https://" + o.bmc, user: user, pass: pass, http: &http.Client{
		Timeout:   o.requestTimeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // the simulator's private CA
	}}
	defer c.http.CloseIdleConnections()
	dut := nvssvt.DUT{ID: o.dutID, BMC: o.bmc, Host: o.host}
	for _, ck := range run(ctx, c, skip) {
		fmt.Fprintf(stdout, "%s: %s %s\n", ck.Name, ck.Status, ck.Message)
		dut.Checks = append(dut.Checks, ck)
		dut.Summary.Count(ck.Status)
	}
	dut.Status = nvssvt.StatusPass
	if dut.Summary.Failed > 0 || dut.Summary.Errors > 0 {
		dut.Status = nvssvt.StatusFail
	}
	rep := nvssvt.Report{Tool: "nvssvt-sim", Version: "1", Status: dut.Status, Summary: dut.Summary, DUTs: []nvssvt.DUT{dut}}
	if err := writeJSON(o.report, rep); err != nil {
		fmt.Fprintf(stderr, "nvssvt-sim: %v\n", err)
		return nvssvt.ExitUsage
	}
	if dut.Status != nvssvt.StatusPass {
		return nvssvt.ExitChecksFailed
	}
	return nvssvt.ExitPassed
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.dutID, strings.TrimPrefix(nvssvt.FlagDUTID, "--"), "", "the DUT's node id")
	fs.StringVar(&o.bmc, strings.TrimPrefix(nvssvt.FlagBMC, "--"), "", "the DUT's BMC, host:port")
	fs.StringVar(&o.host, strings.TrimPrefix(nvssvt.FlagHost, "--"), "", "the DUT's host OS, host:port (not checked)")
	fs.StringVar(&o.logDir, strings.TrimPrefix(nvssvt.FlagLogDir, "--"), "", "the log directory")
	fs.StringVar(&o.report, strings.TrimPrefix(nvssvt.FlagReport, "--"), "", "where to write the report")
	fs.StringVar(&o.override, strings.TrimPrefix(nvssvt.FlagConfigOverride, "--"), "", "a JSON object")
	fs.DurationVar(&o.requestTimeout, "request-timeout", requestTimeout, "the bound of one Redfish request (the stand-in's own flag)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.bmc == "":
		return o, errors.New(nvssvt.FlagBMC + " is required")
	case o.report == "":
		return o, errors.New(nvssvt.FlagReport + " is required")
	case o.requestTimeout <= 0:
		return o, errors.New("--request-timeout must be positive")
	}
	return o, nil
}

// overrideSkips reads the configuration override: "" or a JSON object
// whose "skip" lists check names.
func overrideSkips(s string) (map[string]bool, error) {
	skip := map[string]bool{}
	if s == "" {
		return skip, nil
	}
	var v struct {
		Skip []string `json:"skip"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	for _, n := range v.Skip {
		skip[n] = true
	}
	return skip, nil
}

func envMap(environ []string) map[string]string {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// writeJSON writes v to path atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
