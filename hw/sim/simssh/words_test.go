package simssh

import (
	"slices"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`flint -d /dev/mst/mt4129_pciconf0 --yes query`, []string{"flint", "-d", "/dev/mst/mt4129_pciconf0", "--yes", "query"}},
		{`sudo -S sh -c 'mst start' && echo "a b"`, []string{"sudo", "-S", "sh", "-c", "mst start", "&&", "echo", "a b"}},
		{`cat a\ b`, []string{"cat", "a b"}},
		{"  \t", nil},
	} {
		got, err := SplitWords(tc.line)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	if _, err := SplitWords(`echo 'open`); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}

func TestPayloadString(t *testing.T) {
	if got := PayloadString([]byte{0, 0, 0, 4, 's', 'f', 't', 'p'}); got != "sftp" {
		t.Errorf("PayloadString = %q, want sftp", got)
	}
	if got := PayloadString([]byte{0, 0, 0, 9, 's'}); got != "" {
		t.Errorf("a payload shorter than its length gave %q", got)
	}
}
