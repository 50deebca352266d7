package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// node is one BMC to read: where it is, how to log in, and which request
// sequence its power state takes.
type node struct {
	rack     string
	base     string // https://ip:port
	user     string
	password string
	shelf    bool // a power shelf: the PSU walk instead of System_0
	compute  bool // a compute tray: a firmware command updates it
}

// site is every node loaded, in file order.
type site struct {
	nodes []node
}

// loadSite reads the nodes files.
func loadSite(files []string) (*site, error) {
	s := &site{}
	for _, f := range files {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read nodes: %w", err)
		}
		var set rmspb.NodeSet
		if err := protojson.Unmarshal(data, &set); err != nil {
			return nil, fmt.Errorf("decode nodes file %s: %w", f, err)
		}
		for _, n := range set.GetNodes() {
			bmc := n.GetBmcEndpoint()
			ip := bmc.GetInterface().GetIpAddress()
			if ip == "" {
				return nil, fmt.Errorf("node %s has no BMC address", n.GetNodeId())
			}
			port := int(bmc.GetPort())
			if port == 0 {
				port = 443
			}
			s.nodes = append(s.nodes, node{
				rack:     n.GetRackId(),
				base:     "https://" + net.JoinHostPort(ip, strconv.Itoa(port)),
				user:     bmc.GetCredentials().GetUserPass().GetUsername(),
				password: bmc.GetCredentials().GetUserPass().GetPassword(),
				shelf:    strings.HasPrefix(n.GetType().String(), "POWERSHELF_"),
				compute:  strings.HasPrefix(n.GetType().String(), "COMPUTE_"),
			})
		}
	}
	if len(s.nodes) == 0 {
		return nil, fmt.Errorf("no nodes in %v", files)
	}
	return s, nil
}

// computeTrays returns the compute trays of rack id.
func (s *site) computeTrays(id string) []node {
	var out []node
	for _, n := range s.rack(id) {
		if n.compute {
			out = append(out, n)
		}
	}
	return out
}

// rack returns the nodes of rack id, or every node for "*".
func (s *site) rack(id string) []node {
	if id == "*" {
		return s.nodes
	}
	var out []node
	for _, n := range s.nodes {
		if n.rack == id {
			out = append(out, n)
		}
	}
	return out
}
