package keyring

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A key file its group or others may read or write is refused with the
// mode and the fix, and without the key; a private one loads.
func TestLoadRefusesAKeyFileOthersCanRead(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o666} {
		path := filepath.Join(t.TempDir(), "keys")
		if err := os.WriteFile(path, []byte("k:"+key(3)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		want := fmt.Sprintf("has mode %#o, so its group or others can read or change it", mode)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), key(3)) {
			t.Errorf("mode %#o: %v, want a refusal saying %q", mode, err, want)
		}
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("k:"+key(3)), 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("a 0400 key file: %v", err)
	}
}
