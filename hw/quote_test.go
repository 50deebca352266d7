package hw

import (
	"strings"
	"testing"
)

func TestQuoteShort(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"", `""`},
		{"bmc\n", `"bmc\n"`},
		{strings.Repeat("é", 64), `"` + strings.Repeat("é", 64) + `"`},
		{strings.Repeat("é", 65), `"` + strings.Repeat("é", 64) + `"… (65 characters)`},
		{strings.Repeat("x", 100_000), `"` + strings.Repeat("x", 64) + `"… (100000 characters)`},
	}
	for _, tt := range tests {
		if got := QuoteShort(tt.give); got != tt.want {
			t.Errorf("QuoteShort(%.20q) = %s, want %s", tt.give, got, tt.want)
		}
	}
}
