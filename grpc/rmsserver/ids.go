package rmsserver

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// maxIDLength is the longest job, rack or node id rmsd accepts, in
// characters. Ids are echoed in replies and logs; a longer one is refused
// with INVALID_ARGUMENT before anything runs, and the refusal names the
// field and the limit, never the id itself.
const maxIDLength = 256

// idField is one caller-supplied id and the request field it came in.
type idField struct{ field, value string }

// checkIDs refuses the request if any of ids is longer than maxIDLength,
// is not valid UTF-8 or holds a control or bidirectional formatting
// character (hw.TextProblem): such an id would be stored, logged and
// printed as it came.
func checkIDs(ids ...idField) error {
	for _, x := range ids {
		if err := checkID(x.field, x.value); err != nil {
			return err
		}
	}
	return nil
}

// requireIDs refuses, with INVALID_ARGUMENT naming the field, a request
// whose reply has no message field and that lacks one of ids: an in-band
// FAILURE there could not say why.
func requireIDs(ids ...idField) error {
	for _, x := range ids {
		if strings.TrimSpace(x.value) == "" {
			return status.Errorf(codes.InvalidArgument, "%s is required", x.field)
		}
	}
	return nil
}

// checkID is checkIDs for one id.
func checkID(field, value string) error {
	if n, long := idTooLong(value); long {
		return errIDTooLong(field, n)
	}
	if p := hw.TextProblem(value); p != "" {
		return status.Errorf(codes.InvalidArgument, "%s %s; ids may hold neither control nor bidirectional formatting characters", field, p)
	}
	return nil
}

// checkNodeSetIDs refuses the request if any node of the set has a rack_id
// or node_id that checkIDs refuses, naming the node by its position.
func checkNodeSetIDs(set *rmspb.NodeSet) error {
	for i, ni := range set.GetNodes() {
		if err := checkID(fmt.Sprintf("nodes[%d].node_id", i), ni.GetNodeId()); err != nil {
			return err
		}
		if err := checkID(fmt.Sprintf("nodes[%d].rack_id", i), ni.GetRackId()); err != nil {
			return err
		}
	}
	return nil
}

// idTooLong reports whether value is longer than maxIDLength characters,
// and its length.
func idTooLong(value string) (int, bool) {
	if len(value) <= maxIDLength { // never more characters than bytes
		return len(value), false
	}
	n := utf8.RuneCountInString(value)
	return n, n > maxIDLength
}

func errIDTooLong(field string, n int) error {
	return status.Errorf(codes.InvalidArgument, "%s is %d characters long; ids are limited to %d characters", field, n, maxIDLength)
}
