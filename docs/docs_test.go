package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

func readGuide(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the text of the "## title" section of a guide.
func section(t *testing.T, guide, title string) string {
	t.Helper()
	start := strings.Index(guide, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("no section %q", title)
	}
	rest := guide[start+len(title)+5:]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// goSource is the module's non-test Go source, by path.
func goSource(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "docs") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[path] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// levelCall is a zerolog level call that starts a chain (followed by a
// dot): err.Error() inside a field is not one.
var levelCall = regexp.MustCompile(`\.(Debug|Info|Warn|Error)\(\)\s*\.`)

// logLevels lists the levels at which the source logs a message starting
// with msg: for every Msg("msg...") or Msgf("msg..."), the level of the
// nearest logger call before it.
func logLevels(src map[string]string, msg string) []string {
	var levels []string
	for _, text := range src {
		for _, call := range []string{`Msg("` + msg, `Msgf("` + msg} {
			for off := 0; ; {
				i := strings.Index(text[off:], call)
				if i < 0 {
					break
				}
				at := off + i
				calls := levelCall.FindAllStringSubmatch(text[max(0, at-600):at], -1)
				if len(calls) > 0 {
					levels = append(levels, strings.ToLower(calls[len(calls)-1][1]))
				}
				off = at + len(call)
			}
		}
	}
	return levels
}

// TestTroubleshootingMessagesExist: every message the troubleshooting table
// of operations.md quotes is still written by the code, at the level the
// table gives (a "stderr" row: a start-up error, anywhere in the source).
func TestTroubleshootingMessagesExist(t *testing.T) {
	table := section(t, readGuide(t, "operations.md"), "Troubleshooting by log message")
	src := goSource(t)
	row := regexp.MustCompile("^\\| `([^`]+)` \\| ([a-z]+)")
	rows := 0
	sc := bufio.NewScanner(strings.NewReader(table))
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		rows++
		msg, level := m[1], m[2]
		if level == "stderr" {
			found := false
			for _, text := range src {
				if strings.Contains(text, msg) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("operations.md quotes %q, which no Go source contains any more", msg)
			}
			continue
		}
		levels := logLevels(src, msg)
		if len(levels) == 0 {
			t.Errorf("operations.md quotes the log message %q, which nothing logs any more", msg)
			continue
		}
		if !strings.Contains(strings.Join(levels, " "), level) {
			t.Errorf("operations.md gives %q level %s; the code logs it at %v", msg, level, levels)
		}
	}
	if rows < 20 {
		t.Fatalf("only %d rows found in the troubleshooting table", rows)
	}
}

// TestLogLevelsNoticesAChange is the control of the test above: a message
// that is not logged, or logged at another level, is told apart.
func TestLogLevelsNoticesAChange(t *testing.T) {
	src := map[string]string{"a.go": "log.Warn().Err(err).\n\t\tMsg(\"thing failed\")\nlog.Info().Msg(\"thing done\")"}
	if got := logLevels(src, "thing failed"); len(got) != 1 || got[0] != "warn" {
		t.Fatalf("thing failed: %v", got)
	}
	if got := logLevels(src, "thing done"); len(got) != 1 || got[0] != "info" {
		t.Fatalf("thing done: %v", got)
	}
	src["b.go"] = "log.Warn().Str(\"reason\", cause.Error()).Str(\"x\", err.Error()).\n\t\tMsg(\"thing degraded\")"
	if got := logLevels(src, "thing degraded"); len(got) != 1 || got[0] != "warn" {
		t.Fatalf("thing degraded: %v (an err.Error() field is not a level)", got)
	}
	if got := logLevels(src, "no such thing"); len(got) != 0 {
		t.Fatalf("no such thing: %v", got)
	}
}

// TestAPIGuideCoversEveryRPC: api.md has a section and a grpcurl example
// for every RPC of both services.
func TestAPIGuideCoversEveryRPC(t *testing.T) {
	guide := readGuide(t, "api.md")
	n := 0
	for _, fd := range []protoreflect.FileDescriptor{rmspb.File_rack_manager_rack_manager_proto, rmspbv2.File_rack_manager_v2_rack_manager_v2_proto} {
		for i := range fd.Services().Len() {
			svc := fd.Services().Get(i)
			for j := range svc.Methods().Len() {
				m := svc.Methods().Get(j)
				n++
				heading := "### " + string(m.Name())
				if svc.FullName() != "rack_manager.RackManager" {
					heading = "### " + string(svc.Name()) + "/" + string(m.Name())
				}
				if !strings.Contains(guide, heading+"\n") {
					t.Errorf("api.md has no section %q", heading)
				}
				if !strings.Contains(guide, " "+string(svc.FullName())+"/"+string(m.Name())+"\n") &&
					!strings.Contains(guide, " "+string(svc.FullName())+"/"+string(m.Name())+" ") {
					t.Errorf("api.md has no grpcurl example of %s/%s", svc.FullName(), m.Name())
				}
			}
		}
	}
	if n != 54 {
		t.Errorf("the services have %d RPCs; the guide says 52 + 2", n)
	}
}

// guideFiles are README.md and every guide, module-root relative.
func guideFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = filepath.Join("docs", f)
	}
	return append([]string{"README.md"}, files...)
}

// TestGuidesLinkExistingFiles: every relative link of the README and the
// guides names a file that exists.
func TestGuidesLinkExistingFiles(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, name := range guideFiles(t) {
		for _, m := range link.FindAllStringSubmatch(readGuide(t, filepath.Join("..", name)), -1) {
			target := filepath.Join("..", filepath.Dir(name), m[1])
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s: %v", name, m[1], err)
			}
		}
	}
}

// TestREADMEIsTheFrontDoor: the README stays short, keeps the two
// commands CI and the tests rely on, and links every guide.
func TestREADMEIsTheFrontDoor(t *testing.T) {
	readme := readGuide(t, "../README.md")
	if n := strings.Count(readme, "\n"); n >= 250 {
		t.Errorf("README.md has %d lines; the front door stays under 250 (detail belongs in docs/)", n)
	}
	for _, cmd := range []string{"go run ./cmd/rmsd --simulate", "go test -race ./..."} {
		if !strings.Contains(section(t, readme, "Two commands"), "```sh\n"+cmd+"\n```") {
			t.Errorf("README.md, Two commands, no longer shows %q as a command of its own", cmd)
		}
	}
	docs := section(t, readme, "Documentation")
	guides, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guides {
		if !strings.Contains(docs, "](docs/"+g+")") {
			t.Errorf("README.md, Documentation, does not link docs/%s", g)
		}
	}
}

// pendingMarker opens the section of an RPC that still answers
// UNIMPLEMENTED.
const pendingMarker = "*Implemented in a later change"

// TestAPIGuideMarksPendingRPCs: exactly the RPCs listed in
// grpc/rmsserver/pending.go are marked as implemented in a later change,
// so the marker goes when an RPC lands.
func TestAPIGuideMarksPendingRPCs(t *testing.T) {
	src, err := os.ReadFile("../grpc/rmsserver/pending.go")
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]bool{}
	for _, m := range regexp.MustCompile(`"/([a-z_0-9]+)\.(\w+)/(\w+)"`).FindAllStringSubmatch(string(src), -1) {
		heading := m[3]
		if m[2] != "RackManager" {
			heading = m[2] + "/" + m[3]
		}
		pending[heading] = true
	}
	if len(pending) == 0 {
		t.Log("no pending RPCs")
	}
	guide := readGuide(t, "api.md")
	sections := regexp.MustCompile(`(?m)^### `).Split(guide, -1)[1:]
	seen := 0
	for _, sec := range sections {
		heading, body, _ := strings.Cut(sec, "\n")
		marked := strings.Contains(body[:min(len(body), 300)], pendingMarker)
		switch {
		case pending[heading] && !marked:
			t.Errorf("api.md: %s is still UNIMPLEMENTED (pending.go) but not marked %q", heading, pendingMarker)
		case !pending[heading] && marked:
			t.Errorf("api.md: %s is implemented now; remove the %q note", heading, pendingMarker)
		}
		if pending[heading] {
			seen++
		}
	}
	if seen != len(pending) {
		t.Errorf("api.md has sections for %d of the %d pending RPCs", seen, len(pending))
	}
}
