package conventions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot is the directory holding go.mod, above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// TestLogDurationFieldsNameTheirUnit: zerolog writes a Dur field as a
// number of milliseconds (DurationFieldUnit's default, which nothing may
// change), so every Dur key must end in _ms; "took": 3.2 leaves a reader
// guessing. It reads every non-generated Go file of the module.
func TestLogDurationFieldsNameTheirUnit(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				checkDurCall(t, fset, n)
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "zerolog" &&
					(n.Sel.Name == "DurationFieldUnit" || n.Sel.Name == "DurationFieldInteger") {
					t.Errorf("%s: zerolog.%s is changed or read; duration fields are in milliseconds by convention",
						fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d Go files under %s; the walk is broken", files, root)
	}
}

// checkDurCall reports a zerolog Dur/Durs call whose key is not a literal
// ending in _ms.
func checkDurCall(t *testing.T, fset *token.FileSet, call *ast.CallExpr) {
	t.Helper()
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "Dur" && sel.Sel.Name != "Durs") || len(call.Args) != 2 {
		return
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		t.Errorf("%s: %s key is not a string literal; cannot check its unit", fset.Position(call.Pos()), sel.Sel.Name)
		return
	}
	key, _ := strconv.Unquote(lit.Value)
	if !strings.HasSuffix(key, "_ms") {
		t.Errorf("%s: duration field %q does not name its unit; call it %q", fset.Position(call.Pos()), key, key+"_ms")
	}
}
