package switchcert

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunIDIsUpstreamsFormat(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 89*int(time.Millisecond), time.FixedZone("x", 3600))
	if got := RunID(at); got != "2026-03-04_04-06-07_089" {
		t.Fatalf("RunID = %s", got)
	}
}

func TestLoadMaterialNamesFilesNeverContents(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "d")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.pem", "CA")
	write("client.pem", "CERT")
	if _, err := LoadMaterial(root, "d"); !errors.Is(err, ErrNoMaterial) || !strings.Contains(err.Error(), "d/client.key") {
		t.Fatalf("missing key: %v", err)
	}
	write("client.key", "TOP-SECRET-KEY")
	m, err := LoadMaterial(root, "d")
	if err != nil || m.Key.Reveal() != "TOP-SECRET-KEY" || string(m.CA) != "CA" {
		t.Fatalf("material = %+v, %v", m, err)
	}
	for _, bad := range []string{"", "..", "a/b"} {
		if _, err := LoadMaterial(root, bad); !errors.Is(err, ErrNoMaterial) {
			t.Errorf("domain %q: %v", bad, err)
		}
	}
	if _, err := LoadMaterial("", "d"); !errors.Is(err, ErrNoMaterial) {
		t.Errorf("no root: %v", err)
	}
}

func TestScrubHidesTheKeyAndItsLines(t *testing.T) {
	key := hw.NewSecret("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEF\n-----END PRIVATE KEY-----\n")
	got := scrub("device said: MIIEvQIBADANBgkqhkiG9w0BAQEF is bad", key)
	if strings.Contains(got, "MIIEvQ") {
		t.Fatalf("scrub = %s", got)
	}
}

func TestCertValidTo(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		cert map[string]any
		ok   bool
	}{
		{map[string]any{"valid-to": "2027-01-01T00:00:00Z"}, true},
		{map[string]any{"operational": map[string]any{"valid-to": "2027-01-01T00:00:00Z"}}, true},
		{map[string]any{"valid-to": "2025-01-01T00:00:00Z"}, false},
		{map[string]any{"valid-to": "soon"}, false},
		{map[string]any{}, false},
	} {
		if _, err := certValidTo(c.cert, now); (err == nil) != c.ok {
			t.Errorf("%v: %v", c.cert, err)
		}
	}
}

func TestBindOrderPutsTheNVUEAPILast(t *testing.T) {
	r := &configureRun{plan: ConfigurePlan{Services: []string{ServiceNVUEAPI, ServiceTelemetryInterface}}}
	if got := r.bindOrder(); got[1] != ServiceNVUEAPI {
		t.Fatalf("order = %v", got)
	}
}
