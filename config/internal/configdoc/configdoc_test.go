package main

import (
	"bytes"
	"os"
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

// TestReferenceListsEveryKey checks the reference against a full
// configuration file: every key the loader accepts there is documented.
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
	for _, key := range []string{"port", "tls.insecure", "postgres.db_url", "storage.sqlite_path",
		"workflows.expected_inventory_profiles", "simulator.time_scale", "admin.port", "redfish.max_concurrent_requests"} {
		if !documented[key] {
			t.Errorf("%s is not in the reference", key)
		}
	}
	if len(documented) < 50 {
		t.Errorf("only %d keys documented", len(documented))
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
