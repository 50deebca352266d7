package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// imageBuilder runs buildah with a storage of the test's own (vfs driver,
// chroot isolation: no daemon, no user namespaces, no overlay mounts), so
// it works as root inside an unprivileged container.
type imageBuilder struct{ bin, root, runroot string }

// newImageBuilder returns the builder RMSD_BUILDAH names (the buildah
// command; .ci/install-buildah.sh installs it). Without it the test is
// skipped: it builds rmsd statically, a cold build of the whole module
// that takes minutes on a loaded machine.
func newImageBuilder(t *testing.T) imageBuilder {
	t.Helper()
	bin := os.Getenv("RMSD_BUILDAH")
	if bin == "" {
		t.Skip("RMSD_BUILDAH unset: set it to buildah's path (.ci/install-buildah.sh installs it) to build the image")
	}
	dir := t.TempDir()
	return imageBuilder{bin: bin, root: filepath.Join(dir, "root"), runroot: filepath.Join(dir, "run")}
}

func (b imageBuilder) run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(b.bin, append([]string{"--root", b.root, "--runroot", b.runroot, "--storage-driver", "vfs"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("buildah %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// checkImage checks that image runs as the Containerfile's unprivileged
// user and that rmsd --version runs in it.
func (b imageBuilder) checkImage(t *testing.T, image string) {
	t.Helper()
	_, stage := finalStage(t, readContainerfile(t))
	var wantUser string
	for _, in := range stage {
		if in.op == "USER" {
			wantUser = in.args
		}
	}
	if user := strings.TrimSpace(b.run(t, "", "inspect", "--format", "{{.OCIv1.Config.User}}", image)); user != wantUser || strings.HasPrefix(user, "0") {
		t.Errorf("image user %q, want the Containerfile's unprivileged %q", user, wantUser)
	}
	ctr := strings.TrimSpace(b.run(t, "", "from", "--pull-never", image))
	defer b.run(t, "", "rm", ctr)
	out := b.run(t, "", "run", "--isolation", "chroot", ctr, "--", "/usr/local/bin/rmsd", "--version")
	if !strings.Contains(out, "go:") {
		t.Errorf("rmsd --version in the image printed %q", out)
	}
}

// TestContainerRuntimeStageRuns builds the Containerfile's runtime stage
// as written, with the two things it takes from elsewhere replaced by
// local ones: the base image by an empty one (scratch, so nothing but
// what the stage copies is there) and the build stage's output by rmsd
// and rmsprobe built here with the build stage's own flags. The image
// runs as the unprivileged user and rmsd --version runs in it: the
// binaries are static and need nothing from the base.
func TestContainerRuntimeStageRuns(t *testing.T) {
	b := newImageBuilder(t)
	_, stage := finalStage(t, readContainerfile(t))
	ctx := t.TempDir()
	for _, cmd := range []string{"rmsd", "rmsprobe"} {
		build := exec.Command("go", "build", "-tags", "kubernetes", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", filepath.Join(ctx, "out", cmd), "./cmd/"+cmd)
		build.Dir = ".."
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/%s: %v\n%s", cmd, err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(ctx, "out", "state", "firmware"), 0o755); err != nil {
		t.Fatal(err)
	}
	var file strings.Builder
	file.WriteString("FROM scratch\n")
	for _, in := range stage {
		args := in.args
		if in.op == "COPY" {
			// The build stage's /out/ is the context's out/; the
			// repository's files are the context's too.
			args = strings.ReplaceAll(strings.Replace(args, "--from=build ", "", 1), "/out/", "out/")
			if src := strings.Fields(args); strings.HasPrefix(src[len(src)-2], "deploy/") {
				copyFile(t, filepath.Join("..", src[len(src)-2]), filepath.Join(ctx, src[len(src)-2]))
			}
		}
		if in.op == "HEALTHCHECK" {
			continue // not part of the OCI image format buildah writes
		}
		file.WriteString(in.op + " " + args + "\n")
	}
	if err := os.WriteFile(filepath.Join(ctx, "Containerfile"), []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const image = "localhost/rmsd-runtime-stage:test"
	b.run(t, ctx, "bud", "--isolation", "chroot", "--pull-never", "-f", "Containerfile", "-t", image, ".")
	b.checkImage(t, image)
}

// TestContainerImageBuilds builds deploy/container/Containerfile as an
// operator would, and checks the image. It needs the base images from
// docker.io and gcr.io, so it runs only with RMSD_CONTAINER_BUILD=1 and
// RMSD_BUILDAH (see
// docs/operations.md "Container image" for why CI does not set it).
func TestContainerImageBuilds(t *testing.T) {
	if os.Getenv("RMSD_CONTAINER_BUILD") != "1" {
		t.Skip("RMSD_CONTAINER_BUILD=1 builds the full image (it pulls its base images from docker.io and gcr.io)")
	}
	b := newImageBuilder(t)
	const image = "localhost/rmsd:test"
	b.run(t, "..", "bud", "--isolation", "chroot", "-f", "deploy/container/Containerfile", "-t", image, ".")
	b.checkImage(t, image)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
