package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
	"github.com/rmsd/rmsd/config"
)

// flags are rmsd's command-line flags.
type flags struct {
	configPath string
	explicit   bool // --config was given
	simulate   bool
}

// errVersion is parseFlags' answer to --version, which it has printed.
var errVersion = errors.New("version printed")

// usageError is a command line rmsd cannot run: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// parseFlags parses args. On -h or --help it prints the usage to stdout and
// returns flag.ErrHelp; on --version it prints the build to stdout and
// returns errVersion. A mistake (an unknown flag, a positional argument) is
// explained, with the usage, on stderr and returned as a usageError.
func parseFlags(args []string, stdout, stderr io.Writer) (flags, error) {
	fs := flag.NewFlagSet("rmsd", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: rmsd [--config PATH] [--simulate]\n       rmsd --version\n\n"+
			"rmsd serves the RMS gRPC API (rack_manager.RackManager and rack_manager_v2.RackManagerV2)\n"+
			"until SIGINT or SIGTERM.\n\n")
		fs.PrintDefaults()
	}
	var f flags
	fs.StringVar(&f.configPath, "config", config.DefaultPath, "path of the TOML configuration file")
	fs.BoolVar(&f.simulate, "simulate", false,
		"manage a built-in simulated rack ([simulator] section) and serve plaintext gRPC on loopback")
	var version bool
	fs.BoolVar(&version, "version", false, "print the version, commit and Go version, and exit")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(out.Bytes())
		return f, err
	case err != nil:
		_, _ = stderr.Write(out.Bytes())
		return f, usageError{err}
	case fs.NArg() > 0:
		// rmsd takes no operands: a stray word is a mistyped flag or a
		// subcommand it does not have, never something to ignore.
		err := fmt.Errorf("unexpected argument %q", fs.Arg(0))
		fmt.Fprintf(stderr, "rmsd: %v\n", err)
		fs.Usage()
		_, _ = stderr.Write(out.Bytes())
		return f, usageError{err}
	case version:
		_, _ = io.WriteString(stdout, buildinfo.Describe("rmsd"))
		return f, errVersion
	}
	fs.Visit(func(fl *flag.Flag) { f.explicit = f.explicit || fl.Name == "config" })
	return f, nil
}
