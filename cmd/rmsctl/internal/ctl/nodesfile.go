package ctl

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// defaultNodesFile is where `rmsd --simulate` writes its inventory, the
// nodes file of the commands that need credentials when neither --nodes
// nor the config's nodes_file names one.
const defaultNodesFile = "simulated-nodes.json"

// readProtoJSON decodes a protobuf JSON file (proto or JSON field names).
func readProtoJSON(what, path string, into proto.Message) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return usageError("%s: %w", what, err)
	}
	if err := protojson.Unmarshal(data, into); err != nil {
		return usageError("%s %s: not a %s in protobuf JSON: %s", what, path,
			into.ProtoReflect().Descriptor().FullName(), redactValues(err.Error()))
	}
	return nil
}

// positionInError splits a protojson error into its position and reason.
var positionInError = regexp.MustCompile(`^(.*?\(line \d+:\d+\)):?\s*(.*)$`)

// redactValues keeps a decoding error's position, and its reason only when
// that names a field: protojson otherwise quotes the offending input, which
// in a nodes file may be a password.
func redactValues(msg string) string {
	m := positionInError.FindStringSubmatch(msg)
	if m == nil {
		return "invalid content (not shown)"
	}
	if strings.HasPrefix(m[2], "unknown field") {
		return m[1] + ": " + m[2]
	}
	return m[1] + ": invalid JSON there (not shown)"
}

// readNodeSet reads a rack_manager.NodeSet file.
func readNodeSet(what, path string) (*rmspb.NodeSet, error) {
	var set rmspb.NodeSet
	if err := readProtoJSON(what, path, &set); err != nil {
		return nil, err
	}
	if len(set.GetNodes()) == 0 {
		return nil, usageError("%s %s: no nodes in it", what, path)
	}
	return &set, nil
}

// nodesFlag adds --nodes to a command that sends caller-supplied nodes
// (their endpoints and credentials) rather than registered node ids.
func (a *app) nodesFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.target.NodesFile, "nodes", "",
		"NodeSet file (protobuf JSON) with the nodes' endpoints and credentials (default: the config's nodes_file, else ./"+defaultNodesFile+")")
}

// suppliedNodes are the nodes of --nodes (or its defaults) in rack, only
// those named by ids when any are given, in the order of ids.
func (a *app) suppliedNodes(rack string, ids []string) (*rmspb.NodeSet, error) {
	path := a.target.NodesFile
	if path == "" {
		path = defaultNodesFile
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, usageError("this command sends the nodes' credentials to rmsd: name a NodeSet file with --nodes or nodes_file in the config (%s not found)", path)
		}
	}
	set, err := readNodeSet("--nodes", path)
	if err != nil {
		return nil, err
	}
	return selectNodes(set, path, rack, ids)
}

// selectNodes picks the nodes of rack (any rack when empty) named by ids
// (all of them when none).
func selectNodes(set *rmspb.NodeSet, path, rack string, ids []string) (*rmspb.NodeSet, error) {
	out := &rmspb.NodeSet{}
	inRack := func(n *rmspb.NodeInfo) bool { return rack == "" || n.GetRackId() == rack }
	if len(ids) == 0 {
		for _, n := range set.GetNodes() {
			if inRack(n) {
				out.Nodes = append(out.Nodes, n)
			}
		}
		if len(out.Nodes) == 0 {
			return nil, usageError("%s has no node in rack %q", path, rack)
		}
		return out, nil
	}
	var missing []string
	for _, id := range ids {
		i := slices.IndexFunc(set.GetNodes(), func(n *rmspb.NodeInfo) bool { return n.GetNodeId() == id && inRack(n) })
		if i < 0 {
			missing = append(missing, id)
			continue
		}
		out.Nodes = append(out.Nodes, set.GetNodes()[i])
	}
	if len(missing) > 0 {
		where := ""
		if rack != "" {
			where = " in rack " + rack
		}
		return nil, usageError("%s has no node %s%s", path, strings.Join(missing, ", "), where)
	}
	return out, nil
}
