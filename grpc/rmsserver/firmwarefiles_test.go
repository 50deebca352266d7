package rmsserver

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFirmwareFilesLooksOncePerRequest checks that a request's nodes share
// one look at each file: a package removed after the first node was
// planned is still the one the request found, a fresh request finds it
// gone, and refusals are shared as answers are.
func TestFirmwareFilesLooksOncePerRequest(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "bmc.fwpkg")
	if err := os.WriteFile(pkg, []byte("SIMFW 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := newFirmwareFiles(dir)
	first, err := files.resolve("bmc.fwpkg")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(pkg); first != want {
		t.Fatalf("resolved %q, want %q", first, want)
	}
	if err := os.Remove(pkg); err != nil {
		t.Fatal(err)
	}
	if again, err := files.resolve("bmc.fwpkg"); err != nil || again != first {
		t.Fatalf("second node of the request got %q, %v; want %q", again, err, first)
	}
	if _, err := newFirmwareFiles(dir).resolve("bmc.fwpkg"); err == nil {
		t.Fatal("a new request found the removed package")
	}
	_, outside := files.resolve("../escape.bin")
	_, outsideAgain := files.resolve("../escape.bin")
	var te *targetError
	if !errors.As(outside, &te) || outsideAgain != outside {
		t.Fatalf("a file outside firmware_dir: %v then %v, want the same refusal twice", outside, outsideAgain)
	}
}
