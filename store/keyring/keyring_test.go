package keyring

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func key(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

func TestSealOpensWithItsKeyAndRecordOnly(t *testing.T) {
	k, err := Parse([]byte("# rmsd keys\nk2:" + key(2) + "\n\nk1:" + key(1) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if k.Current() != "k2" {
		t.Fatalf("current key %q, want the first line's", k.Current())
	}
	id, sealed, err := k.Seal([]byte("hunter2"), []byte("rack/node"))
	if err != nil || id != "k2" {
		t.Fatalf("seal: %q, %v", id, err)
	}
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("the sealed value contains the plaintext")
	}
	if got, err := k.Open(id, sealed, []byte("rack/node")); err != nil || string(got) != "hunter2" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := k.Open(id, sealed, []byte("rack/other")); !errors.Is(err, ErrOpen) {
		t.Errorf("open bound to another record: %v, want ErrOpen", err)
	}
	if _, err := k.Open("k1", sealed, []byte("rack/node")); !errors.Is(err, ErrOpen) {
		t.Errorf("open with another key id: %v, want ErrOpen", err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	if _, err := k.Open(id, tampered, []byte("rack/node")); !errors.Is(err, ErrOpen) {
		t.Errorf("open tampered: %v, want ErrOpen", err)
	}
}

// TestRotationKeepsOldValuesReadable: after a new key goes on the first
// line, values sealed with the old one still open; once the old line is
// gone they are refused by name.
func TestRotationKeepsOldValuesReadable(t *testing.T) {
	old, _ := Parse([]byte("k1:" + key(1)))
	id, sealed, _ := old.Seal([]byte("secret"), nil)
	rotated, _ := Parse([]byte("k2:" + key(2) + "\nk1:" + key(1)))
	if got, err := rotated.Open(id, sealed, nil); err != nil || string(got) != "secret" {
		t.Fatalf("old value after rotation = %q, %v", got, err)
	}
	if id, _, _ := rotated.Seal([]byte("secret"), nil); id != "k2" {
		t.Errorf("rotated keyring seals with %q, want k2", id)
	}
	only, _ := Parse([]byte("k2:" + key(2)))
	if _, err := only.Open(id, sealed, nil); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) {
		t.Errorf("old value without its key: %v, want ErrUnknownKey naming k1", err)
	}
}

func TestBadKeyFilesAreRefusedWithoutShowingKeys(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))
	for name, file := range map[string]string{
		"empty":        "# nothing\n",
		"no id":        key(1),
		"short key":    "k:" + short,
		"not base64":   "k:!!!",
		"duplicate id": "k:" + key(1) + "\nk:" + key(2),
	} {
		_, err := Parse([]byte(file))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), short) || strings.Contains(err.Error(), key(1)) {
			t.Errorf("%s: the error shows the key: %v", name, err)
		}
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("k:"+key(3)), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := Load(path); err != nil || k.Current() != "k" {
		t.Fatalf("load: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing key file was accepted")
	}
}
