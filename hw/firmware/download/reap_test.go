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
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, ".e.part-0123456789abcdef"), filepath.Join(root, ".f.part-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	n, err := download.ReapTempFiles(root)
	if err != nil || n != 2 {
		t.Fatalf("removed %d, %v; want 2", n, err)
	}
	want := ".d.part-123 .f.part-0123456789abcdef DGXGB200_1.3.6 DGXGB200_1.3.6/.hidden DGXGB200_1.3.6/b.bin c.fwpkg.part-0123456789abcdef link"
	if got := strings.Join(files(t, root), " "); got != want {
		t.Errorf("left\n %s\nwant\n %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(outside, ".e.part-0123456789abcdef")); err != nil {
		t.Errorf("a file outside the root was touched: %v", err)
	}
	if n, err := download.ReapTempFiles(filepath.Join(root, "absent")); n != 0 || err != nil {
		t.Errorf("missing root: %d, %v", n, err)
	}
}
