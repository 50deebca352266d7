package redfish

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestErrorMessageSaysEachSentenceOnce(t *testing.T) {
	const denied = "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation."
	tests := []struct {
		name, give, want string
	}{
		{"repeated in extended info", `{"error":{"code":"Base.1.0.InsufficientPrivilege","message":"` + denied +
			`","@Message.ExtendedInfo":[{"MessageId":"Base.1.0.InsufficientPrivilege","Message":"` + denied + `"}]}}`, denied},
		{"general then extended", `{"error":{"message":"A general error has occurred. See ExtendedInfo for more information.",` +
			`"@Message.ExtendedInfo":[{"Message":"The request body submitted was malformed JSON."},{"Message":"The request body submitted was malformed JSON. "}]}}`,
			"A general error has occurred. See ExtendedInfo for more information.; The request body submitted was malformed JSON."},
		{"extended only", `{"error":{"@Message.ExtendedInfo":[{"Message":"first"},{"Message":""},{"Message":"second"}]}}`, "first; second"},
		{"not json", `<html>401</html>`, ""},
	}
	for _, tt := range tests {
		if got := errorMessage([]byte(tt.give)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestErrorMessageIsClippedOnACharacterBoundary(t *testing.T) {
	got := errorMessage([]byte(`{"error":{"message":"` + strings.Repeat("€", 400) + `"}}`))
	if len(got) > maxErrorMessage || !utf8.ValidString(got) || !strings.HasPrefix(got, "€€") {
		t.Fatalf("%d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
