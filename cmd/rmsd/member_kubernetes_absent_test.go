//go:build !kubernetes

package main

import (
	"strings"
	"testing"
)

// TestClusterKubernetesProviderNotBuiltIn: an rmsd built without the tag
// kubernetes refuses provider kubernetes at start, before any store is
// opened or port bound, saying how to get a binary that has it.
func TestClusterKubernetesProviderNotBuiltIn(t *testing.T) {
	const config = `[postgres]
db_url = "postgres://postgres@127.0.0.1:1/none"
[cluster]
enabled = true
member_id = "m-a"
advertised_address = "127.0.0.1:7000"
provider = "kubernetes"
`
	var stdout, stderr lockedBuffer
	code := run(t.Context(), runOptions{Args: []string{"--config", writeFile(t, config)}, Environ: withStorage(t, nil), Stdout: &stdout, Stderr: &stderr})
	if code != 1 {
		t.Fatalf("exit %d, stderr %q; want 1", code, stderr.String())
	}
	for _, want := range []string{"[cluster] provider", "built without the kubernetes provider", "go build -tags kubernetes"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q; want %q", stderr.String(), want)
		}
	}
}
