package deploy

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/config"
)

// instruction is one Containerfile instruction, continuation lines joined.
type instruction struct {
	op, args string
}

func readContainerfile(t *testing.T) []instruction {
	t.Helper()
	data, err := os.ReadFile("container/Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur string
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		cur += trimmed
		op, args, _ := strings.Cut(cur, " ")
		out = append(out, instruction{op: strings.ToUpper(op), args: strings.TrimSpace(args)})
		cur = ""
	}
	return out
}

// finalStage returns the instructions after the last FROM, and that FROM.
func finalStage(t *testing.T, all []instruction) (string, []instruction) {
	t.Helper()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].op == "FROM" {
			return all[i].args, all[i+1:]
		}
	}
	t.Fatal("Containerfile has no FROM")
	return "", nil
}

func TestContainerfileRuntimeStage(t *testing.T) {
	all := readContainerfile(t)
	base, stage := finalStage(t, all)
	if !strings.Contains(base, "distroless/static") && base != "scratch" {
		t.Errorf("runtime base %q: want distroless/static or scratch", base)
	}
	var froms int
	for _, in := range all {
		if in.op == "FROM" {
			froms++
		}
	}
	if froms < 2 {
		t.Errorf("%d FROM instructions: want a multi-stage build", froms)
	}
	got := map[string][]string{}
	for _, in := range stage {
		got[in.op] = append(got[in.op], in.args)
	}
	users := got["USER"]
	if len(users) == 0 {
		t.Fatal("runtime stage has no USER")
	}
	user, _, _ := strings.Cut(users[len(users)-1], ":")
	if user == "0" || user == "root" || user == "" {
		t.Errorf("USER %q: want an unprivileged user", users[len(users)-1])
	}
	if !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(user) {
		t.Errorf("USER %q: want a numeric uid, which Kubernetes' runAsNonRoot can check", user)
	}
	exposed := strings.Fields(strings.Join(got["EXPOSE"], " "))
	for _, port := range []string{"8801", "8802"} {
		if !contains(exposed, port) {
			t.Errorf("EXPOSE %v: missing %s", exposed, port)
		}
	}
	if !anyContains(got["COPY"], "/etc/rms/config.toml") {
		t.Error("runtime stage copies no /etc/rms/config.toml")
	}
	if !anyContains(append(got["CMD"], got["ENTRYPOINT"]...), "/etc/rms/config.toml") {
		t.Error("rmsd is not started with --config /etc/rms/config.toml")
	}
	if !anyContains(got["HEALTHCHECK"], "/usr/local/bin/rmsprobe") {
		t.Errorf("HEALTHCHECK %v does not run rmsprobe", got["HEALTHCHECK"])
	}
	if !anyContains(got["STOPSIGNAL"], "SIGTERM") {
		t.Error("no STOPSIGNAL SIGTERM (rmsd's drain signal)")
	}
}

// TestContainerfileBuildsStaticCommands checks that the builder links
// without cgo, with the kubernetes provider (build tag kubernetes: the
// chart's StatefulSet mode uses it), and builds rmsd and rmsprobe, and that
// both are main packages of this module.
func TestContainerfileBuildsStaticCommands(t *testing.T) {
	var buildCmd string
	for _, in := range readContainerfile(t) {
		if in.op == "RUN" && strings.Contains(in.args, "go build") {
			buildCmd = in.args
		}
	}
	if !strings.Contains(buildCmd, "CGO_ENABLED=0") {
		t.Errorf("go build %q: want CGO_ENABLED=0 (a static binary for distroless/static)", buildCmd)
	}
	if !regexp.MustCompile(`\s-tags[= ]"?([a-z0-9_]+,)*kubernetes\b`).MatchString(buildCmd) {
		t.Errorf("go build %q: want -tags kubernetes (the Helm chart's StatefulSet mode uses the kubernetes provider)", buildCmd)
	}
	for _, cmd := range []string{"rmsd", "rmsprobe"} {
		if !strings.Contains(buildCmd, "./cmd/"+cmd) {
			t.Errorf("go build %q does not build ./cmd/%s", buildCmd, cmd)
		}
		pkg, err := build.ImportDir(filepath.Join("..", "cmd", cmd), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !pkg.IsCommand() {
			t.Errorf("cmd/%s is package %s, not a command", cmd, pkg.Name)
		}
	}
}

// TestContainerConfigLoads loads the image's /etc/rms/config.toml with
// rmsd's own loader: state lives on the /var/lib/rms volume.
func TestContainerConfigLoads(t *testing.T) {
	cfg, err := config.Load(config.Source{Path: "container/config.toml", Explicit: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 8801 || cfg.Storage.SQLitePath != "/var/lib/rms/rmsd.db" || cfg.Workflows.FirmwareDir != "/var/lib/rms/firmware" {
		t.Errorf("port %d, sqlite_path %q, firmware_dir %q: want 8801 and both under /var/lib/rms",
			cfg.Port, cfg.Storage.SQLitePath, cfg.Workflows.FirmwareDir)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func anyContains(list []string, sub string) bool {
	for _, v := range list {
		if strings.Contains(v, sub) {
			return true
		}
	}
	return false
}
