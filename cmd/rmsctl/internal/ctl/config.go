package ctl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/pflag"
)

// Defaults of the target settings.
const (
	defaultAddr    = "127.0.0.1:8801"
	defaultTimeout = 30 * time.Second
)

// target is where and how rmsctl reaches rmsd: the global flags, each of
// which can also come from the config file (a flag given on the command
// line wins).
type target struct {
	Addr       string   `toml:"addr"`
	TLS        bool     `toml:"tls"`
	CA         string   `toml:"ca"`
	Cert       string   `toml:"cert"`
	Key        string   `toml:"key"`
	ServerName string   `toml:"server_name"`
	Timeout    duration `toml:"timeout"`
	// NodesFile is the NodeSet (protobuf JSON, e.g. simulated-nodes.json)
	// the commands that send caller-supplied nodes take them from.
	NodesFile string `toml:"nodes_file"`
}

// duration is a time.Duration written as "30s" in TOML.
type duration time.Duration

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// defaultConfigPath is $XDG_CONFIG_HOME/rmsctl/config.toml (on Linux,
// ~/.config/rmsctl/config.toml without XDG_CONFIG_HOME); "" when neither
// is known.
func defaultConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "rmsctl", "config.toml")
}

// loadConfig reads the config file at path into t, for every setting not
// given on the command line (flags). A missing file is an error only when
// it was named explicitly; unknown keys are errors.
func loadConfig(path string, explicit bool, t *target, flags *pflag.FlagSet) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil
	}
	if err != nil {
		return usageError("config: %w", err)
	}
	var file target
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			return usageError("config %s: unknown keys:\n%s", path, strict.String())
		}
		return usageError("config %s: %w", path, err)
	}
	set := func(flag string, apply func()) {
		if !flags.Changed(flag) {
			apply()
		}
	}
	if file.Addr != "" {
		set("addr", func() { t.Addr = file.Addr })
	}
	if file.TLS {
		set("tls", func() { t.TLS = true })
	}
	if file.CA != "" {
		set("ca", func() { t.CA = relativeTo(path, file.CA) })
	}
	if file.Cert != "" {
		set("cert", func() { t.Cert = relativeTo(path, file.Cert) })
	}
	if file.Key != "" {
		set("key", func() { t.Key = relativeTo(path, file.Key) })
	}
	if file.ServerName != "" {
		set("server-name", func() { t.ServerName = file.ServerName })
	}
	if file.Timeout != 0 {
		set("timeout", func() { t.Timeout = file.Timeout })
	}
	if file.NodesFile != "" && t.NodesFile == "" {
		t.NodesFile = relativeTo(path, file.NodesFile)
	}
	return nil
}

// relativeTo resolves a file named in the config file against the config
// file's own directory.
func relativeTo(configPath, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(configPath), name)
}

// check refuses inconsistent target settings before anything is dialled.
func (t *target) check() error {
	if t.Addr == "" {
		return usageError("--addr is empty")
	}
	if (t.Cert == "") != (t.Key == "") {
		return usageError("--cert and --key go together (client certificate and its key)")
	}
	if time.Duration(t.Timeout) <= 0 {
		return usageError("--timeout must be positive, got %s", time.Duration(t.Timeout))
	}
	return nil
}

// String of a duration flag value, for pflag.
func (d *duration) String() string { return time.Duration(*d).String() }

// Set parses a duration flag value, for pflag.
func (d *duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration (e.g. 30s, 2m): %q", s)
	}
	*d = duration(v)
	return nil
}

// Type names a duration flag's value in the help, for pflag.
func (d *duration) Type() string { return "duration" }
