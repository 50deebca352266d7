package nvssvt

import (
	"errors"
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// The command line of one run (see the package comment).
const (
	FlagDUTID          = "--dut-id"
	FlagBMC            = "--bmc"
	FlagHost           = "--host"
	FlagLogDir         = "--log-dir"
	FlagReport         = "--report"
	FlagConfigOverride = "--config-override"
)

// The environment variables the credentials travel in.
const (
	EnvBMCUsername  = "NVSSVT_BMC_USERNAME"
	EnvBMCPassword  = "NVSSVT_BMC_PASSWORD"
	EnvHostUsername = "NVSSVT_HOST_USERNAME"
	EnvHostPassword = "NVSSVT_HOST_PASSWORD"
)

// The exit statuses of the contract.
const (
	// ExitPassed: every check passed.
	ExitPassed = 0
	// ExitChecksFailed: the scan ran and at least one check failed; the
	// report says which.
	ExitChecksFailed = 1
	// ExitUsage: the tool could not scan (bad arguments, a configuration
	// override it refuses). Any other non-zero status means the same.
	ExitUsage = 2
)

// ReportFile is the report's name inside the run's log directory.
const ReportFile = "report.json"

// Default ports of the DUT's endpoints when the node gives none.
const (
	defaultBMCPort  = 443
	defaultHostPort = 22
)

// keptEnv are the variables of rmsd's environment a run inherits.
var keptEnv = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"}

// Scan is one DUT to validate.
type Scan struct {
	// ID names the run's log directory: the scan job's id.
	ID string
	// NodeID is the caller's node id, passed as --dut-id.
	NodeID string
	// BMC is the DUT's BMC, with its user name and password (required).
	BMC hw.Endpoint
	// Host is the DUT's host OS, when the caller supplied it; its
	// credentials are passed when it has them.
	Host *hw.Endpoint
	// ConfigOverride is passed as --config-override when not empty,
	// unchanged.
	ConfigOverride string
}

// Errors of a scan that cannot run.
var (
	// ErrNoCredentials: the DUT's BMC has no user name and password.
	ErrNoCredentials = errors.New("bmc_endpoint needs a username and password: NVSSVT reaches the DUT over its BMC")
	// ErrNoAddress: the DUT's BMC has no address.
	ErrNoAddress = errors.New("bmc_endpoint has no ip_address or host_name")
)

// Check refuses, without running anything, a scan NVSSVT could not do.
func (s Scan) Check() error {
	switch {
	case s.BMC.Host() == "":
		return ErrNoAddress
	case s.BMC.Credentials.Username == "" || s.BMC.Credentials.Password.IsZero():
		return ErrNoCredentials
	}
	return nil
}

// args are the contract's arguments of s, logging to logDir.
func (s Scan) args(logDir, report string) []string {
	out := []string{FlagDUTID, s.NodeID, FlagBMC, s.BMC.Addr(defaultBMCPort)}
	if s.hasHost() {
		out = append(out, FlagHost, s.Host.Addr(defaultHostPort))
	}
	out = append(out, FlagLogDir, logDir, FlagReport, report)
	if s.ConfigOverride != "" {
		out = append(out, FlagConfigOverride, s.ConfigOverride)
	}
	return out
}

func (s Scan) hasHost() bool { return s.Host != nil && s.Host.Host() != "" }

// env is the run's environment: the kept variables of base and the
// credentials.
func (s Scan) env(base []string) []string {
	var out []string
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		for _, k := range keptEnv {
			if name == k {
				out = append(out, kv)
			}
		}
	}
	out = append(out, EnvBMCUsername+"="+s.BMC.Credentials.Username, EnvBMCPassword+"="+s.BMC.Credentials.Password.Reveal())
	if s.hasHost() && s.Host.Credentials.Username != "" {
		out = append(out, EnvHostUsername+"="+s.Host.Credentials.Username, EnvHostPassword+"="+s.Host.Credentials.Password.Reveal())
	}
	return out
}

// secrets are the values scrubbed from everything a run records.
func (s Scan) secrets() []string {
	var out []string
	for _, sec := range []hw.Secret{s.BMC.Credentials.Password, s.hostPassword()} {
		if !sec.IsZero() {
			out = append(out, sec.Reveal())
		}
	}
	return out
}

func (s Scan) hostPassword() hw.Secret {
	if s.Host == nil {
		return hw.Secret{}
	}
	return s.Host.Credentials.Password
}
