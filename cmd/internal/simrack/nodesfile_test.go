package simrack

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

func twoNodes() []hw.Node {
	bmc := hw.Endpoint{IP: "127.77.0.1", Port: 8443, Credentials: hw.UserPass("admin", "sim-pw")}
	host := hw.Endpoint{IP: "127.77.0.2", Port: 8765, Credentials: hw.UserPass("admin", "sim-pw")}
	return []hw.Node{
		{ID: "c1", RackID: "rack-001", Type: hw.ComputeGB200Nvidia, BMC: &bmc},
		{ID: "s1", RackID: "rack-001", Type: hw.SwitchGB200Nvidia, BMC: &bmc, Host: &host},
	}
}

// TestWriteNodesFileReplacesTheFileInOneStep: a reader that opened the old
// file before the write still reads all of it, because the new content
// arrives as a different, complete file renamed over the path; a write into
// the old file would show the reader a truncated or mixed file.
func TestWriteNodesFileReplacesTheFileInOneStep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nodes.json")
	old := bytes.Repeat([]byte(`{"nodes": []}`+"\n"), 1000)
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	before, err := reader.Stat()
	if err != nil {
		t.Fatal(err)
	}

	if err := WriteNodesFile(path, twoNodes()); err != nil {
		t.Fatal(err)
	}

	seen, err := io.ReadAll(reader)
	if err != nil || !bytes.Equal(seen, old) {
		t.Fatalf("a reader of the old file saw %d bytes (%v), want the %d old bytes unchanged", len(seen), err, len(old))
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Fatal("the nodes file was rewritten in place; it must be replaced by a complete new file")
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 (the file holds credentials)", after.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var set rmspb.NodeSet
	if err := protojson.Unmarshal(data, &set); err != nil || len(set.GetNodes()) != 2 {
		t.Fatalf("new file: %d nodes, %v; want 2", len(set.GetNodes()), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v (%v); want only nodes.json, no temporary files", entries, err)
	}
}

// TestFailedNodesFileWriteLeavesNoTemporaryFile: when the rename cannot
// happen (here the path is a directory), the error names the path and the
// temporary file is gone.
func TestFailedNodesFileWriteLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nodes.json")
	if err := os.MkdirAll(filepath.Join(path, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := WriteNodesFile(path, twoNodes())
	if err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "nodes.json" {
		t.Fatalf("directory holds %v after a failed write; want only the original entry", entries)
	}
}
