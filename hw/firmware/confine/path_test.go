package confine_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/firmware/confine"
)

// layout builds a firmware directory with links of every kind beside an
// outside directory holding a secret file:
//
//	base/outside/secret
//	base/fw/pkg.fwpkg, base/fw/sub/inner.bin
//	base/fw/out-dir    -> base/outside      (a directory link out)
//	base/fw/out-file   -> base/outside/secret
//	base/fw/dangling   -> base/outside/new  (a create would land outside)
//	base/fw/in-link    -> base/fw/sub        (a link that stays inside)
//	base/fw/rel-out    -> ../outside         (a relative link out)
func layout(t *testing.T) (fw, outside string) {
	t.Helper()
	base := t.TempDir()
	fw, outside = filepath.Join(base, "fw"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(fw, "sub"), outside} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{
		filepath.Join(outside, "secret"):      "outside",
		filepath.Join(fw, "pkg.fwpkg"):        "inside",
		filepath.Join(fw, "sub", "inner.bin"): "inner",
	} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out-dir":  outside,
		"out-file": filepath.Join(outside, "secret"),
		"dangling": filepath.Join(outside, "new"),
		"in-link":  filepath.Join(fw, "sub"),
		"rel-out":  "../outside",
	} {
		if err := os.Symlink(target, filepath.Join(fw, link)); err != nil {
			t.Fatal(err)
		}
	}
	return fw, outside
}

func TestPath_RefusesEveryEscape(t *testing.T) {
	fw, outside := layout(t)
	tests := []struct {
		name string
		give string
		want error
	}{
		{"parent", "../outside/secret", confine.ErrEscapes},
		{"parent after a directory", "sub/../../outside/secret", confine.ErrEscapes},
		{"parent that would stay inside", "sub/../pkg.fwpkg", confine.ErrEscapes},
		{"bare parent", "..", confine.ErrEscapes},
		{"absolute outside", filepath.Join(outside, "secret"), confine.ErrEscapes},
		{"absolute system file", "/etc/passwd", confine.ErrEscapes},
		{"absolute prefix sibling", fw + "-other/x", confine.ErrEscapes},
		{"directory link out", "out-dir/secret", confine.ErrEscapes},
		{"file link out", "out-file", confine.ErrEscapes},
		{"relative link out", "rel-out/secret", confine.ErrEscapes},
		{"new file under a link out", "out-dir/new.bin", confine.ErrEscapes},
		{"dangling link", "dangling", confine.ErrEscapes},
		{"empty", "", confine.ErrInvalidName},
		{"NUL byte", "pkg\x00.fwpkg", confine.ErrInvalidName},
		{"the root itself", ".", confine.ErrInvalidName},
		{"the root itself, absolute", fw, confine.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := confine.Path(fw, tt.give)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Path(%q) = %q, %v; want %v", tt.give, got, err, tt.want)
			}
			var ce *confine.Error
			if !errors.As(err, &ce) || ce.Name != tt.give || ce.Root != fw {
				t.Errorf("error %v does not name %q in %s", err, tt.give, fw)
			}
		})
	}
}

func TestPath_AcceptsNamesInside(t *testing.T) {
	fw, _ := layout(t)
	real, err := filepath.EvalSymlinks(fw)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give string
		want string
	}{
		{"relative file", "pkg.fwpkg", filepath.Join(real, "pkg.fwpkg")},
		{"file in a subdirectory", "sub/inner.bin", filepath.Join(real, "sub", "inner.bin")},
		{"dot prefix", "./pkg.fwpkg", filepath.Join(real, "pkg.fwpkg")},
		{"absolute inside", filepath.Join(fw, "pkg.fwpkg"), filepath.Join(real, "pkg.fwpkg")},
		{"link that stays inside", "in-link/inner.bin", filepath.Join(real, "sub", "inner.bin")},
		{"file that does not exist yet", "new/dir/file.bin", filepath.Join(real, "new", "dir", "file.bin")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := confine.Path(fw, tt.give)
			if err != nil || got != tt.want {
				t.Fatalf("Path(%q) = %q, %v; want %q", tt.give, got, err, tt.want)
			}
		})
	}
}

func TestPath_RootThroughALink(t *testing.T) {
	fw, _ := layout(t)
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(fw, alias); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pkg.fwpkg", filepath.Join(fw, "pkg.fwpkg"), filepath.Join(alias, "pkg.fwpkg")} {
		if _, err := confine.Path(alias, name); err != nil {
			t.Errorf("Path(alias, %q): %v", name, err)
		}
	}
}

func TestPath_MissingRootIsNotARefusal(t *testing.T) {
	_, err := confine.Path(filepath.Join(t.TempDir(), "absent"), "x.bin")
	if err == nil || errors.Is(err, confine.ErrEscapes) || errors.Is(err, confine.ErrInvalidName) {
		t.Fatalf("got %v, want a plain error about the root", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v does not wrap the cause", err)
	}
}

func TestPath_LongNameIsQuotedShort(t *testing.T) {
	fw, _ := layout(t)
	long := "../" + strings.Repeat("x", 5000)
	_, err := confine.Path(fw, long)
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "5003 characters") {
		t.Fatalf("message not bounded: %d bytes: %.200v", len(err.Error()), err)
	}
}

func TestOpen_ReadsInsideAndRefusesEscapes(t *testing.T) {
	fw, _ := layout(t)
	f, err := confine.Open(fw, "in-link/inner.bin")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "inner" {
		t.Fatalf("read %q, %v", b, err)
	}
	for _, name := range []string{"out-file", "../outside/secret", "out-dir/secret", "/etc/passwd"} {
		if f, err := confine.Open(fw, name); !errors.Is(err, confine.ErrEscapes) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%q) = %v, want ErrEscapes", name, err)
		}
	}
	if _, err := confine.Open(fw, "absent.bin"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file = %v, want ErrNotExist", err)
	}
}
