package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rmsd/rmsd/config"
)

// flags are rmsd's command-line flags.
type flags struct {
	configPath string
	explicit   bool // --config was given
	simulate   bool
}

// parseFlags parses args. On -h or --help it prints the usage to stdout and
// returns flag.ErrHelp; a mistake is explained, with the usage, on stderr.
func parseFlags(args []string, stdout, stderr io.Writer) (flags, error) {
	fs := flag.NewFlagSet("rmsd", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: rmsd [--config PATH] [--simulate]\n\n"+
			"rmsd serves the RMS gRPC API (rack_manager.RackManager and rack_manager_v2.RackManagerV2)\n"+
			"until SIGINT or SIGTERM.\n\n")
		fs.PrintDefaults()
	}
	var f flags
	fs.StringVar(&f.configPath, "config", config.DefaultPath, "path of the TOML configuration file")
	fs.BoolVar(&f.simulate, "simulate", false,
		"manage a built-in simulated rack ([simulator] section) and serve plaintext gRPC on loopback")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(out.Bytes())
		return f, err
	case err != nil:
		_, _ = stderr.Write(out.Bytes())
		return f, err
	}
	fs.Visit(func(fl *flag.Flag) { f.explicit = f.explicit || fl.Name == "config" })
	return f, nil
}
