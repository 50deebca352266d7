package hw

import "testing"

func TestTextProblem(t *testing.T) {
	for s, unsafe := range map[string]bool{
		"rack-1": false, "é€\ufffd": false, "GB200_NVL72.x": false,
		"\x1b[31mred": true, "a\x00b": true, "a\nb": true, "\u202eevil": true, "a\u2066b": true,
		"\x7f": true, "\u0085": true, "\u2028": true, "\xff": true, "a\xc3": true,
	} {
		if got := TextProblem(s) != ""; got != unsafe {
			t.Errorf("TextProblem(%q) = %q, want unsafe=%v", s, TextProblem(s), unsafe)
		}
	}
}
