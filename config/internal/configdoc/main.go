// Command configdoc writes docs/config-reference.md, the configuration
// reference, from the config package: section and key names from the koanf
// tags, types from the field types, defaults from config.Default, meanings
// from the doc comments in the package's source. It runs from config/ as
// `go generate ./config`:
//
//	configdoc -src . -o ../docs/config-reference.md
//
// A field without a doc comment is an error, so the reference can never
// list a key without saying what it does. TestReferenceIsFresh fails when
// the committed file differs from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	src := flag.String("src", ".", "directory of the config package's source")
	out := flag.String("o", "../docs/config-reference.md", "file to write")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	doc, err := Render(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
