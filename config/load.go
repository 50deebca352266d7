package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/knadh/koanf/parsers/toml/v2"
	env "github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// EnvAllowInsecure is the environment variable that must equal "1", in
// addition to [tls] insecure = true, for rmsd to serve plaintext gRPC.
const EnvAllowInsecure = "RMS_ALLOW_INSECURE"

// envDatabaseURL overrides [postgres] db_url, as in upstream RMS.
const envDatabaseURL = "DATABASE_URL"

const envPrefix = "RMS_"

// Source says where to read the configuration from.
type Source struct {
	// Path of the TOML file.
	Path string
	// Explicit is true when the path was given on the command line: then a
	// missing file is an error. A missing file at the default path means
	// "built-in defaults".
	Explicit bool
	// Environ is the process environment as os.Environ returns it.
	Environ []string
}

// Load reads the file and environment named by src over the defaults and
// validates the result. The error lists every problem found.
func Load(src Source) (*Config, error) {
	k := koanf.New(".")
	if err := loadFile(k, src); err != nil {
		return nil, err
	}
	origins := map[string]string{}
	if err := k.Load(env.Provider(".", env.Opt{
		Prefix:        "",
		EnvironFunc:   func() []string { return src.Environ },
		TransformFunc: envKey(origins),
	}), nil); err != nil {
		return nil, fmt.Errorf("config: read environment: %w", err)
	}

	cfg := Default()
	d := decoder{origins: origins}
	d.decodeStruct("", k.Raw(), cfg)
	problems := append(d.problems, cfg.problems()...)
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return cfg, nil
}

func loadFile(k *koanf.Koanf, src Source) error {
	if src.Path == "" {
		return nil
	}
	_, err := os.Stat(src.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !src.Explicit:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("configuration file not found: %s", src.Path)
	case err != nil:
		return fmt.Errorf("cannot access configuration file %s: %w", src.Path, err)
	}
	if err := k.Load(file.Provider(src.Path), toml.Parser()); err != nil {
		return fmt.Errorf("configuration file %s: %w", src.Path, err)
	}
	return nil
}

// envKey maps RMS_<SECTION>__<KEY> to section.key and DATABASE_URL to
// postgres.db_url, remembering which variable set which key so that errors
// can name it. Other variables are ignored.
func envKey(origins map[string]string) func(k, v string) (string, any) {
	return func(name, value string) (string, any) {
		var key string
		switch {
		case name == envDatabaseURL:
			key = "postgres.db_url"
		case name == EnvAllowInsecure:
			return "", nil
		case strings.HasPrefix(name, envPrefix) && len(name) > len(envPrefix):
			key = strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, envPrefix), "__", "."))
		default:
			return "", nil
		}
		origins[key] = name
		return key, value
	}
}

// Error lists every problem found in a configuration.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid configuration (%d problems): %s", len(e.Problems), strings.Join(e.Problems, "; "))
}
