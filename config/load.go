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
	gotoml "github.com/pelletier/go-toml/v2"
)

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
	overrides := envOverrides{origins: map[string]string{}}
	if err := k.Load(env.Provider(".", env.Opt{
		EnvironFunc:   func() []string { return src.Environ },
		TransformFunc: overrides.key,
	}), nil); err != nil {
		return nil, fmt.Errorf("config: read environment: %w", err)
	}

	cfg := Default()
	d := decoder{origins: overrides.origins, problems: overrides.invalid}
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
		var syntax *gotoml.DecodeError
		if errors.As(err, &syntax) {
			// The position, not the offending line: it may hold a secret.
			line, column := syntax.Position()
			return &Error{Problems: []string{fmt.Sprintf("%s: TOML syntax error at line %d, column %d: %s",
				src.Path, line, column, strings.TrimPrefix(syntax.Error(), "toml: "))}}
		}
		return fmt.Errorf("configuration file %s: %w", src.Path, err)
	}
	return nil
}

// Error lists every problem found in a configuration.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("invalid configuration (%d %s): %s", len(e.Problems), noun, strings.Join(e.Problems, "; "))
}
