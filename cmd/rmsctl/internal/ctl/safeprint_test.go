package ctl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestPrintableQuotesOnlyUnsafeText(t *testing.T) {
	for in, want := range map[string]string{
		"rack-001":     "rack-001",
		"é€":           "é€",
		"\x1b[31mred":  `"\x1b[31mred"`,
		"a\x00b":       `"a\x00b"`,
		"n1\nforged":   `"n1\nforged"`,
		"rack\u202e1":  `"rack\u202e1"`,
		"bad\xffbytes": `"bad\xffbytes"`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}

// safeWriter keeps line breaks and tabs and escapes every other unsafe
// character, so a terminal never receives an escape sequence or a
// bidirectional override; its escapes keep a JSON line valid JSON.
func TestSafeWriterEscapesWhatWouldActOnATerminal(t *testing.T) {
	var out bytes.Buffer
	in := "SUCCESS: \x1b[31mred\x1b[0m\tok\u202eevil\u0085\x7f\n"
	n, err := safeWriter{&out}.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d", n, err, len(in))
	}
	want := `SUCCESS: \u001b[31mred\u001b[0m` + "\tok" + `\u202eevil\u0085\u007f` + "\n"
	if out.String() != want {
		t.Fatalf("wrote %q, want %q", out.String(), want)
	}
	out.Reset()
	line := `{"rack_ids":["a` + "\u202e\u0085" + `b"]}`
	if _, err := (safeWriter{&out}).Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	var v struct {
		RackIDs []string `json:"rack_ids"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v.RackIDs) != 1 || v.RackIDs[0] != "a\u202e\u0085b" ||
		strings.ContainsRune(out.String(), '\u202e') {
		t.Fatalf("JSON line %q: %v %v", out.String(), v, err)
	}
}
