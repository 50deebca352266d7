package main

import (
	"bytes"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/config"
)

const (
	configDir = "../.."
	reference = "../../../docs/config-reference.md"
)

// TestReferenceIsFresh fails when docs/config-reference.md no longer says
// what the config package does.
func TestReferenceIsFresh(t *testing.T) {
	want, err := Render(configDir)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(reference)
	if err != nil {
		t.Fatalf("%v: run go generate ./config", err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("docs/config-reference.md is stale: run go generate ./config (first difference at line %d)",
			firstDifference(have, want))
	}
}

func firstDifference(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// TestReferenceListsEveryKey checks the reference against the loader's own
// keys (every koanf-tagged field of config.Config, found by reflection,
// not by the source reading the generator does): each one is documented
// in full, and nothing else is.
func TestReferenceListsEveryKey(t *testing.T) {
	sections, err := Collect(configDir)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, s := range sections {
		for _, k := range s.Keys {
			if k.Meaning == "" || k.Type == "" || k.Default == "" {
				t.Errorf("%s: incomplete entry %+v", k.Dotted(), k)
			}
			documented[k.Dotted()] = true
		}
	}
	loader := map[string]bool{}
	loaderKeys(reflect.TypeOf(config.Config{}), "", loader)
	for key := range loader {
		if !documented[key] {
			t.Errorf("%s is accepted by the loader but not in the reference", key)
		}
	}
	for key := range documented {
		if !loader[key] {
			t.Errorf("%s is in the reference but the loader has no such key", key)
		}
	}
}

// loaderKeys adds the dotted koanf keys of struct type t under prefix: a
// nested struct is a section, anything else (maps included) a key.
func loaderKeys(t reflect.Type, prefix string, into map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("koanf"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath() {
			loaderKeys(f.Type, prefix+tag+".", into)
			continue
		}
		into[prefix+tag] = true
	}
}

// TestEnvironmentNamesAreOverrides sets every variable the reference names
// to the key's default: the loader must accept each one as the key it
// overrides (an override naming no key is an error).
func TestEnvironmentNamesAreOverrides(t *testing.T) {
	sections, err := Collect(configDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(config.Source{Environ: []string{"RMS_SERVER__NO_SUCH_KEY=1"}}); err == nil ||
		!strings.Contains(err.Error(), "RMS_SERVER__NO_SUCH_KEY") {
		t.Fatalf("an override naming no key must be refused, got %v", err)
	}
	n := 0
	for _, s := range sections {
		for _, k := range s.Keys {
			for _, name := range k.Env {
				value := k.Default
				if value == "unset" {
					value = ""
				} else if unq, err := strconv.Unquote(value); err == nil {
					value = unq
				}
				if _, err := config.Load(config.Source{Environ: []string{name + "=" + value}}); err != nil {
					t.Errorf("%s=%q (for %s): %v", name, value, k.Dotted(), err)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no environment variables in the reference")
	}
}

// TestUndocumentedFieldIsRefused: a configuration field without a doc
// comment fails generation, naming the field.
func TestUndocumentedFieldIsRefused(t *testing.T) {
	dir := t.TempDir()
	src := []byte("package config\n\n// Config is it.\ntype Config struct {\n\tPort int `koanf:\"port\"`\n}\n")
	if err := os.WriteFile(dir+"/config.go", src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Render(dir)
	if err == nil || !strings.Contains(err.Error(), "Config.Port (port) has no doc comment") {
		t.Fatalf("got %v", err)
	}
}
