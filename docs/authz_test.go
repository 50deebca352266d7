package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/authz"
)

// TestAuthzGuideListsEveryGroup: authz.md lists, under each group, exactly
// the RPCs the authorization table puts in it.
func TestAuthzGuideListsEveryGroup(t *testing.T) {
	groups := section(t, readGuide(t, "authz.md"), "Groups and their RPCs")
	quoted := regexp.MustCompile("`([^`]+)`")
	for _, g := range authz.Groups {
		head := "\n### `" + string(g) + "`\n"
		start := strings.Index(groups, head)
		if start < 0 {
			t.Errorf("authz.md has no section for group %s", g)
			continue
		}
		body := groups[start+len(head):]
		if end := strings.Index(body, "\n### "); end >= 0 {
			body = body[:end]
		}
		var listed []string
		for _, line := range strings.Split(body, "\n") {
			if rest, ok := strings.CutPrefix(line, "RPCs: "); ok {
				for _, m := range quoted.FindAllStringSubmatch(rest, -1) {
					listed = append(listed, m[1])
				}
			}
		}
		slices.Sort(listed)
		if want := authz.MethodsOf(g); !slices.Equal(listed, want) {
			t.Errorf("authz.md lists for %s\n  %v\nthe table has\n  %v", g, listed, want)
		}
	}
}

// TestAuthzGuideExampleLoads: the configuration example of authz.md is a
// valid [authz] that rmsd would start with.
func TestAuthzGuideExampleLoads(t *testing.T) {
	body := section(t, readGuide(t, "authz.md"), "Configuration")
	start := strings.Index(body, "```toml\n")
	if start < 0 {
		t.Fatal("no TOML example in the Configuration section")
	}
	example := body[start+len("```toml\n"):]
	example = example[:strings.Index(example, "```")]
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{Path: path, Explicit: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := authz.New(cfg.Authz)
	if err != nil || p == nil {
		t.Fatalf("authz.New: %v %v", p, err)
	}
	if len(cfg.Authz.Roles) != 4 || len(cfg.Authz.Bindings) != 4 {
		t.Fatalf("the example has %d roles and %d bindings", len(cfg.Authz.Roles), len(cfg.Authz.Bindings))
	}
}
