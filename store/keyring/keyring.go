// Package keyring seals what rmsd keeps in its store that must stay secret
// at rest (the credentials of registered nodes), with AES-256-GCM and keys
// read from [storage] encryption_key_file.
//
// The key file holds one key a line, "<key id>:<base64 of 32 bytes>"
// (blank lines and lines starting with # are ignored). The first key seals;
// every key opens what it sealed, so rotating is: put a new key on the
// first line, keep the old ones below it, restart (rmsd re-seals every
// record under the new key at start), then remove the old lines. Each
// sealed value carries the id of its key; a value is bound to what it
// belongs to (the additional data, e.g. the node's identity), so it cannot
// be moved to another record. Keys never appear in errors.
package keyring

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrUnknownKey: a value was sealed with a key the key file no longer has.
var ErrUnknownKey = errors.New("keyring: sealed with a key that is not in the key file")

// ErrOpen: a sealed value does not open (tampered, or another record's).
var ErrOpen = errors.New("keyring: sealed value does not open")

// Keyring is a loaded key file.
type Keyring struct {
	current string
	keys    map[string]cipher.AEAD
}

// Load reads a key file. A key file that its group or others may read or
// change is refused, saying so (checkPrivate).
func Load(path string) (*Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keyring: read key file: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	if err := checkPrivate(path, f); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("keyring: read key file: %w", err)
	}
	k, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("keyring: key file %s: %w", path, err)
	}
	return k, nil
}

// Parse reads the contents of a key file.
func Parse(data []byte) (*Keyring, error) {
	k := &Keyring{keys: map[string]cipher.AEAD{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		id, enc, ok := strings.Cut(text, ":")
		id = strings.TrimSpace(id)
		if !ok || id == "" || strings.ContainsAny(id, " \t") {
			return nil, fmt.Errorf("line %d: want <key id>:<base64 key>", line)
		}
		if _, dup := k.keys[id]; dup {
			return nil, fmt.Errorf("line %d: key id %q appears twice", line, id)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
		if err != nil || len(raw) != 32 {
			return nil, fmt.Errorf("line %d: key %q must be 32 bytes in standard base64 (e.g. head -c 32 /dev/urandom | base64)", line, id)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("line %d: key %q: %w", line, id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("line %d: key %q: %w", line, id, err)
		}
		k.keys[id] = aead
		if k.current == "" {
			k.current = id
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if k.current == "" {
		return nil, errors.New("no key")
	}
	return k, nil
}

// Current is the id of the key that seals.
func (k *Keyring) Current() string { return k.current }

// Seal encrypts plaintext with the current key, bound to aad, and returns
// the key's id and nonce || ciphertext.
func (k *Keyring) Seal(plaintext, aad []byte) (keyID string, sealed []byte, err error) {
	aead := k.keys[k.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	return k.current, aead.Seal(nonce, nonce, plaintext, k.aad(k.current, aad)), nil
}

// Open decrypts what Seal returned.
func (k *Keyring) Open(keyID string, sealed, aad []byte) ([]byte, error) {
	aead, ok := k.keys[keyID]
	if !ok {
		return nil, fmt.Errorf("key %q: %w", keyID, ErrUnknownKey)
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrOpen
	}
	n := aead.NonceSize()
	out, err := aead.Open(nil, sealed[:n], sealed[n:], k.aad(keyID, aad))
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}

// aad binds a value to its key id as well as to its record.
func (k *Keyring) aad(keyID string, aad []byte) []byte {
	return append([]byte(keyID+"\x00"), aad...)
}
