package docs

import (
	"regexp"
	"slices"
	"strings"
	"testing"

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
