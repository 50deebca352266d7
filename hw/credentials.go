package hw

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
)

// redacted stands in for every secret when a credential is printed.
const redacted = "[REDACTED]"

// Secret is a string that never shows itself: String, %v, %#v, JSON, slog and
// zerolog all print "[REDACTED]". Reveal returns the value for the one place
// that must send it to a device.
type Secret struct{ value string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{value: s} }

// Reveal returns the secret value. Call it only where the value goes on the wire.
func (s Secret) Reveal() string { return s.value }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.value == "" }

func (s Secret) String() string   { return redacted }
func (s Secret) GoString() string { return redacted }

// Format makes every fmt verb print the redaction marker.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON writes the redaction marker, never the value.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }

// MarshalText writes the redaction marker, never the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// Credentials authenticate against a BMC or a switch: either a user name and
// password or a session token. Every form of printing hides the secrets.
type Credentials struct {
	Username string
	Password Secret
	Token    Secret
}

// UserPass builds password credentials.
func UserPass(user, password string) Credentials {
	return Credentials{Username: user, Password: NewSecret(password)}
}

// SessionToken builds token credentials.
func SessionToken(token string) Credentials {
	return Credentials{Token: NewSecret(token)}
}

// IsZero reports whether no credential is set.
func (c Credentials) IsZero() bool {
	return c.Username == "" && c.Password.IsZero() && c.Token.IsZero()
}

func (c Credentials) String() string {
	if !c.Token.IsZero() {
		return "token:" + redacted
	}
	return c.Username + ":" + redacted
}

// GoString hides the secrets from %#v.
func (c Credentials) GoString() string { return "hw.Credentials{" + c.String() + "}" }

// Format makes every fmt verb use String.
func (c Credentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// LogValue implements slog.LogValuer.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("username", c.Username), slog.String("password", redacted))
}

// MarshalJSON never writes a secret.
func (c Credentials) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Username string `json:"username,omitempty"`
		Password string `json:"password,omitempty"`
		Token    string `json:"token,omitempty"`
	}{c.Username, maskIfSet(c.Password), maskIfSet(c.Token)})
}

func maskIfSet(s Secret) string {
	if s.IsZero() {
		return ""
	}
	return redacted
}

// Scrub replaces every occurrence in s of each secret with "[REDACTED]",
// the secret as given and as it reads inside a JSON string (so one echoed
// into a JSON document goes too): the forms ScrubForms lists, in that
// order. Empty secrets are ignored.
func Scrub(s string, secrets ...string) string {
	for _, form := range ScrubForms(secrets...) {
		s = strings.ReplaceAll(s, form, redacted)
	}
	return s
}

// ScrubForms lists the strings Scrub replaces for secrets: each non-empty
// secret, then its JSON-escaped form when that differs.
func ScrubForms(secrets ...string) []string {
	forms := make([]string, 0, len(secrets))
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		forms = append(forms, sec)
		q, _ := json.Marshal(sec) // a string always marshals
		if esc := string(q[1 : len(q)-1]); esc != sec {
			forms = append(forms, esc)
		}
	}
	return forms
}
