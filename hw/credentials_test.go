package hw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestCredentialsNeverPrintTheirSecrets(t *testing.T) {
	const password, token = "pw-Sup3rS3cret", "tok-Sup3rS3cret"
	values := []any{
		UserPass("admin", password),
		SessionToken(token),
		NewSecret(password),
		Endpoint{IP: "127.0.0.1", Port: 443, Credentials: UserPass("admin", password)},
		&Endpoint{HostName: "bmc", Credentials: SessionToken(token)},
	}
	for _, v := range values {
		var out strings.Builder
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(j)
		var logged bytes.Buffer
		slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "value", v)
		out.WriteString(logged.String())
		if s := out.String(); strings.Contains(s, "Sup3rS3cret") {
			t.Errorf("%T leaked a secret:\n%s", v, s)
		}
	}
}

func TestRevealReturnsTheValue(t *testing.T) {
	c := UserPass("admin", "pw")
	if c.Password.Reveal() != "pw" || c.Username != "admin" {
		t.Fatal("credentials lost their value")
	}
	if !(Credentials{}).IsZero() || c.IsZero() {
		t.Fatal("IsZero is wrong")
	}
}

func TestEndpointAddr(t *testing.T) {
	tests := []struct {
		give Endpoint
		want string
	}{
		{Endpoint{IP: "10.1.2.3"}, "10.1.2.3:443"},
		{Endpoint{IP: "10.1.2.3", Port: 8443}, "10.1.2.3:8443"},
		{Endpoint{HostName: "bmc-7"}, "bmc-7:443"},
		{Endpoint{IP: "fe80::1", Port: 22}, "[fe80::1]:22"},
	}
	for _, tt := range tests {
		if got := tt.give.Addr(443); got != tt.want {
			t.Errorf("%+v.Addr(443) = %s, want %s", tt.give, got, tt.want)
		}
	}
}

func TestNodeTypeNames(t *testing.T) {
	if ComputeGB200Nvidia.Name() != "compute_gb200_nvidia" || SwitchGB300Nvidia.Kind() != KindSwitch {
		t.Fatal("node type table is wrong")
	}
	if NodeType(99).Valid() || NodeTypeUnspecified.Valid() || !PowerShelfGB300Delta.Valid() {
		t.Fatal("Valid is wrong")
	}
	if NodeType(99).String() != "NodeType(99)" {
		t.Fatalf("unknown type prints %q", NodeType(99).String())
	}
}

func TestScrubHidesASecretAsGivenAndJSONEscaped(t *testing.T) {
	const plain, odd = "s3cret-Pa55", `pa"ss\w<rd"`
	doc, err := json.Marshal(map[string]string{"a": "login " + plain + " failed", "b": "with " + odd})
	if err != nil {
		t.Fatal(err)
	}
	got := Scrub("said "+plain+" and "+odd+"; "+string(doc), plain, "", odd)
	if strings.Contains(got, plain) || strings.Contains(got, odd) || strings.Contains(got, `pa\"ss`) {
		t.Fatalf("a secret survived: %q", got)
	}
	if want := `said [REDACTED] and [REDACTED]; {"a":"login [REDACTED] failed","b":"with [REDACTED]"}`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A secret ending in a quote: its escaped form is not its quoted JSON
	// with every quote trimmed (that would redact a lone backslash).
	if got := Scrub(`a\b "x"`, `"`); got != `a\b [REDACTED]x[REDACTED]` {
		t.Errorf("got %q", got)
	}
	if got := ScrubForms("", "plain", `q"`); len(got) != 3 || got[0] != "plain" || got[1] != `q"` || got[2] != `q\"` {
		t.Errorf("forms %q", got)
	}
	if got := Scrub("unchanged", ""); got != "unchanged" {
		t.Errorf("an empty secret changed %q", got)
	}
}
