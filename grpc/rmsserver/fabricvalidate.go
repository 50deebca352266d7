package rmsserver

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// What the scale-up fabric RPCs (v1 and v2) accept as a topology and as
// extra static config entries. A topology, a config file name and a key
// are names written into the switches' fm_config: at most maxTopology
// characters from [A-Za-z0-9_.-]; a file name may not start with '.'. A
// value is at most maxStaticValue bytes of text without control or
// bidirectional formatting characters.
const (
	// maxTopology bounds a topology name, a config file name and a key.
	maxTopology = 128
	// maxStaticValue bounds an extra static config value.
	maxStaticValue = 1024
)

// topologyProblem says why t, sent in field, is not a topology name, or ""
// when it is one.
func topologyProblem(field, t string) string {
	if strings.TrimSpace(t) == "" {
		return field + " is required"
	}
	return nameProblem(field, t)
}

// nameProblem says why a non-empty name is not one fm_config can hold.
func nameProblem(field, t string) string {
	if len(t) > maxTopology {
		return fmt.Sprintf("%s is %d bytes long; at most %d", field, len(t), maxTopology)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return field + " may only hold letters, digits, '_', '-' and '.'"
		}
	}
	return ""
}

// invalidWithoutMessage is the INVALID_ARGUMENT that answers a refused
// request whose reply has no message field to say why.
func invalidWithoutMessage(refusal string) error {
	return status.Error(codes.InvalidArgument, refusal)
}

// staticConfigProblem checks the v2 request's extra static config entries
// (the empty and duplicate ones are hw/fabricsync's to refuse, with the
// rest of the plan).
func staticConfigProblem(entries []*rmspb.ScaleUpFabricStaticConfig) string {
	for i, e := range entries {
		field := fmt.Sprintf("config.extra_static_configs[%d]", i)
		if f := e.GetConfigFileName(); f != "" {
			if p := nameProblem(field+".config_file_name", f); p != "" {
				return p
			}
			if strings.HasPrefix(f, ".") {
				return field + ".config_file_name may not start with '.'"
			}
		}
		if k := e.GetKey(); k != "" {
			if p := nameProblem(field+".key", k); p != "" {
				return p
			}
		}
		v := e.GetValue()
		if len(v) > maxStaticValue {
			return fmt.Sprintf("%s.value is %d bytes long; at most %d", field, len(v), maxStaticValue)
		}
		if p := hw.TextProblem(v); p != "" {
			return field + ".value " + p
		}
	}
	return ""
}
