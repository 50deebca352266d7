package download_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/firmware/download"
)

func TestReapTempFiles_RemovesOnlyLeftoverDownloads(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(root, ".a.fwpkg.part-0123456789abcdef"))
	mk(filepath.Join(root, "DGXGB200_1.3.6", ".b.bin.part-fedcba9876543210"))
	mk(filepath.Join(root, "DGXGB200_1.3.6", "b.bin"))
	mk(filepath.Join(root, "DGXGB200_1.3.6", ".hidden"))
	mk(filepath.Join(root, "c.fwpkg.part-0123456789abcdef")) // no leading dot: not ours
	mk(filepath.Join(root, ".d.part-123"))                   // not 16 hex digits
	mk(filepath.Join(outside, ".e.part-0123456789abcdef"))
	mk(filepath.Join(root, ".g.part-"+download.MemberTag("m-a")+"-0123456789abcdef")) // a member's: not a single rmsd's
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, ".e.part-0123456789abcdef"), filepath.Join(root, ".f.part-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	n, err := download.ReapTempFiles(root, "")
	if err != nil || n != 2 {
		t.Fatalf("removed %d, %v; want 2", n, err)
	}
	want := ".d.part-123 .f.part-0123456789abcdef .g.part-" + download.MemberTag("m-a") + "-0123456789abcdef DGXGB200_1.3.6 DGXGB200_1.3.6/.hidden DGXGB200_1.3.6/b.bin c.fwpkg.part-0123456789abcdef link"
	if got := strings.Join(files(t, root), " "); got != want {
		t.Errorf("left\n %s\nwant\n %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(outside, ".e.part-0123456789abcdef")); err != nil {
		t.Errorf("a file outside the root was touched: %v", err)
	}
	if n, err := download.ReapTempFiles(filepath.Join(root, "absent"), ""); n != 0 || err != nil {
		t.Errorf("missing root: %d, %v", n, err)
	}
}

// Members sharing one firmware_dir each remove their own leftovers only:
// the others' files belong to downloads that may be running right now.
func TestReapTempFiles_MemberRemovesOnlyItsOwn(t *testing.T) {
	root := t.TempDir()
	a, b := download.MemberTag("m-a"), download.MemberTag("m-b")
	if len(a) != 8 || a == b || download.MemberTag("") != "" {
		t.Fatalf("tags %q and %q (and %q for a single rmsd): want 8 hex digits each, different", a, b, download.MemberTag(""))
	}
	for _, p := range []string{
		".x.fwpkg.part-" + a + "-0123456789abcdef",
		"obj/.y.bin.part-" + a + "-fedcba9876543210",
		"obj/.y.bin.part-" + b + "-fedcba9876543210",
		".z.part-0123456789abcdef", // a single rmsd's
		"obj/.y.bin.part-" + a + "-0123",
	} {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := download.ReapTempFiles(root, "m-a")
	if err != nil || n != 2 {
		t.Fatalf("member m-a removed %d, %v; want its 2", n, err)
	}
	want := ".z.part-0123456789abcdef obj obj/.y.bin.part-" + a + "-0123 obj/.y.bin.part-" + b + "-fedcba9876543210"
	if got := strings.Join(files(t, root), " "); got != want {
		t.Errorf("left\n %s\nwant\n %s", got, want)
	}
}
