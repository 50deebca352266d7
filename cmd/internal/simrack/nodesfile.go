package simrack

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
)

// WriteNodesFile writes nodes as a rack_manager.NodeSet in protobuf JSON
// (proto field names), so that `grpcurl -d @ ... < file` can send it as the
// `nodes` of a request. The file holds the simulator's credentials and is
// written 0600. It replaces any previous file atomically: the new content
// goes to a temporary file in the same directory, which is renamed over the
// path only once complete, so a reader sees the old file or the new one,
// never a part of either.
func WriteNodesFile(path string, nodes []hw.Node) error {
	set := &rmspb.NodeSet{}
	for _, n := range nodes {
		set.Nodes = append(set.Nodes, rmsserver.NodeInfoToProto(n))
	}
	data, err := protojson.MarshalOptions{Multiline: true, UseProtoNames: true}.Marshal(set)
	if err != nil {
		return fmt.Errorf("encode simulated nodes: %w", err)
	}
	if err := replaceFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write simulated nodes file %s: %w", path, err)
	}
	return nil
}

// replaceFile writes data to a new 0600 temporary file beside path, flushes
// it to disk and renames it over path. On failure path is untouched and the
// temporary file is removed.
func replaceFile(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
