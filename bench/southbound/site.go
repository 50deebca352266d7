package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/bench/launch"
	"github.com/rmsd/rmsd/bench/procstat"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// simRacksPerProcess is the most racks one rmssim starts. A rack takes
// about 100 file descriptors before any client connects (a listener per
// BMC, four per NVOS host, the compute hosts'): at 200 racks a simulator
// reaches a 20,000 descriptor limit, fails its accepts and stalls the
// first read's handshakes for tens of seconds. Fifty racks stay far below.
const simRacksPerProcess = 50

// sims is the simulated site: one or more rmssim processes and their racks,
// renumbered into one sequence (rack-001 …).
type sims struct {
	procs []*launch.Process
	racks []*rmspb.NodeSet // racks[i] is rack-(i+1)
}

// simConfig is one rmssim's configuration: free ports, a loopback network
// of its own, and warnings only (the harness waits on its ready line). Its
// time runs 10,000 times faster than real time: a ten-minute BMC flash
// takes 60 ms, so the firmware scenario measures the upload, not the
// simulated flash.
const simConfig = `
[simulator]
racks = %d
network = %d
time_scale = 0.0001
bmc_port = 0
nvue_port = 0
ssh_port = 0
nmx_port = 0
gnmi_port = 0
nodes_file = %q
[logging]
log_level = "info"
`

// startSims starts enough rmssim processes for racks racks.
func startSims(ctx context.Context, bin, dir string, racks, network int) (*sims, error) {
	s := &sims{}
	for first, i := 0, 0; first < racks; first, i = first+simRacksPerProcess, i+1 {
		n := min(simRacksPerProcess, racks-first)
		// Rack r of a simulator listens on 127.(network + r/256).(r%256).x;
		// a simulator's racks fit in one second octet, its own.
		net := network + i
		cfgPath := filepath.Join(dir, fmt.Sprintf("rmssim-%d.toml", i))
		nodesFile := filepath.Join(dir, fmt.Sprintf("rmssim-%d-nodes.json", i))
		if err := os.WriteFile(cfgPath, fmt.Appendf(nil, simConfig, n, net, nodesFile), 0o600); err != nil {
			s.stop()
			return nil, fmt.Errorf("write the simulator's configuration: %w", err)
		}
		p, err := launch.Start(ctx, launch.Spec{Name: fmt.Sprintf("rmssim-%d", i), LogPath: filepath.Join(dir, fmt.Sprintf("rmssim-%d.log", i)),
			Ready: logMessage("simulator running")}, bin, "--config", cfgPath)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.procs = append(s.procs, p)
		set, err := readNodes(nodesFile)
		if err != nil {
			s.stop()
			return nil, err
		}
		if err := s.addRacks(set, first); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// addRacks splits set by rack and renumbers its racks from offset, so that
// a second simulator's rack-001 becomes rack-201.
func (s *sims) addRacks(set *rmspb.NodeSet, offset int) error {
	index := map[string]int{}
	for _, n := range set.GetNodes() {
		rack := n.GetRackId()
		i, ok := index[rack]
		if !ok {
			i = len(s.racks)
			index[rack] = i
			s.racks = append(s.racks, &rmspb.NodeSet{})
		}
		if offset > 0 {
			renamed := fmt.Sprintf("rack-%03d", i+1)
			n = proto.CloneOf(n)
			n.NodeId = strings.Replace(n.GetNodeId(), rack, renamed, 1)
			n.RackId = renamed
		}
		s.racks[i].Nodes = append(s.racks[i].Nodes, n)
	}
	if len(s.racks) != offset+len(index) {
		return fmt.Errorf("simulator at rack %d: %d racks in its nodes file", offset+1, len(index))
	}
	return nil
}

// nodes is every node of the first racks racks.
func (s *sims) nodes(racks int) *rmspb.NodeSet {
	out := &rmspb.NodeSet{}
	for _, r := range s.racks[:racks] {
		out.Nodes = append(out.Nodes, r.GetNodes()...)
	}
	return out
}

// writeNodes writes the first racks racks as a nodes file for the bare
// client.
func (s *sims) writeNodes(path string, racks int) error {
	b, err := protojson.Marshal(s.nodes(racks))
	if err != nil {
		return fmt.Errorf("encode nodes: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write nodes: %w", err)
	}
	return nil
}

// cpu is the simulators' CPU time so far.
func (s *sims) cpu() (time.Duration, error) {
	var total time.Duration
	for _, p := range s.procs {
		c, err := procstat.CPUTime(p.PID())
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}

// stop stops every simulator.
func (s *sims) stop() {
	for _, p := range s.procs {
		_ = p.Stop()
	}
	s.procs = nil
}

func readNodes(path string) (*rmspb.NodeSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	var set rmspb.NodeSet
	if err := protojson.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return &set, nil
}

// logMessage matches a JSON log line with that message.
func logMessage(msg string) func(string) bool {
	return func(line string) bool {
		var l struct{ Message string }
		return json.Unmarshal([]byte(line), &l) == nil && l.Message == msg
	}
}
