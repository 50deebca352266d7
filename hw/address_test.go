package hw

import (
	"strings"
	"testing"
)

func TestCheckAddress(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"10.1.2.3", true},
		{"::1", true},
		{"fe80::1%eth0", true},
		{"bmc", true},
		{"bmc-01.rack-7.example.com", true},
		{"bmc-01.example.com.", true},
		{"0bmc", true},
		{strings.Repeat("a", 63) + ".b", true},
		{"", false},
		{".", false},
		{"a..b", false},
		{"-bmc", false},
		{"bmc-", false},
		{"bmc_01", false},
		{"bmc 01", false},
		{"10.1.2.3:443", false},
		{"https://bmc", false},
		{"bmc\x00", false},
		{"bmç", false},
		{strings.Repeat("a", 64), false},
		{strings.Repeat("a.", 127) + "a", false}, // 255 characters
	}
	for _, tt := range tests {
		if err := CheckAddress(tt.give); (err == nil) != tt.want {
			t.Errorf("CheckAddress(%.40q) = %v, want ok=%v", tt.give, err, tt.want)
		}
	}
}
