// Command configdoc writes docs/config-reference.md, the configuration
// reference, from the config package: section and key names from the koanf
// tags, types from the field types, defaults from config.Default, meanings
// from the doc comments in the package's source. It runs from config/ as
// `go generate ./config`:
//
//	configdoc -src . -o ../docs/config-reference.md
//
// A field without a doc comment is an error, so the reference can never
// list a key without saying what it does. With -check it writes nothing and
// fails when the file differs from what it would write.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
)

func main() {
	src := flag.String("src", ".", "directory of the config package's source")
	out := flag.String("o", "../docs/config-reference.md", "file to write")
	check := flag.Bool("check", false, "compare with the file instead of writing it")
	flag.Parse()
	if err := run(*src, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
}

func run(src, out string, check bool) error {
	doc, err := Render(src)
	if err != nil {
		return err
	}
	if check {
		have, err := os.ReadFile(out)
		if err != nil {
			return fmt.Errorf("read %s: %w", out, err)
		}
		if !bytes.Equal(have, doc) {
			return fmt.Errorf("%s is stale: run go generate ./config", out)
		}
		return nil
	}
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
