package launch

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Build compiles the command pkg (e.g. "./cmd/rmsd") of the module at root
// into dir with that module's own dependency versions, and returns the
// binary's path. The build stamps the revision when git can tell it
// (GetVersion names it).
func Build(ctx context.Context, root, pkg, dir string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-o", bin, pkg)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s in %s: %w\n%s", pkg, root, err, out.String())
	}
	return bin, nil
}
