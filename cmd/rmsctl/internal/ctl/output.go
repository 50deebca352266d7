package ctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// jsonOptions print every field, zero values included, under its proto
// name (job_id, not jobId), as the request files rmsctl reads are written.
var jsonOptions = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// emit prints one reply: with -o json as one compact line of protobuf JSON
// (protojson's whitespace, which varies on purpose, is normalised so the
// output is stable), else through text, escaped (safeWriter).
func (a *app) emit(m proto.Message, text func(w io.Writer)) error {
	if a.output == "json" {
		return writeJSONLine(a.streams.Out, m)
	}
	text(safeWriter{a.streams.Out})
	return nil
}

// emitOperation prints a reply whose outcome is one OperationResponse
// (status: message) and returns its in-band FAILURE.
func (a *app) emitOperation(rpc string, reply proto.Message, op *rmspb.OperationResponse) error {
	if err := a.emit(reply, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s\n", code(op.GetStatus()), op.GetMessage())
	}); err != nil {
		return err
	}
	return inBand(rpc, op.GetStatus(), op.GetMessage())
}

func writeJSONLine(w io.Writer, m proto.Message) error {
	raw, err := jsonOptions.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return fmt.Errorf("encode %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// table writes aligned columns; the header is the first row.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() { _ = t.tw.Flush() }

// code is a ReturnCode without its enum prefix: SUCCESS, FAILURE.
func code(c rmspb.ReturnCode) string {
	return strings.TrimPrefix(c.String(), "RETURN_CODE_")
}

// jobState is a JobExecutionState without its prefix: Queued, Running, ...
func jobState(s rmspb.JobExecutionState) string {
	name := strings.TrimPrefix(s.String(), "JOB_EXECUTION_STATE_")
	if name == "" {
		return "Unknown"
	}
	return name[:1] + strings.ToLower(name[1:])
}

// nodeType is a NodeType's enum name, "-" when unspecified.
func nodeType(t rmspb.NodeType) string {
	if t == rmspb.NodeType_NODE_TYPE_UNSPECIFIED {
		return ""
	}
	return t.String()
}

// when is a timestamp in RFC 3339, "" when unset.
func when(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format("2006-01-02T15:04:05Z")
}

// batchSummary prints a NodeBatchResponse's status line, its failed nodes
// and its job id.
func batchSummary(w io.Writer, r *rmspb.NodeBatchResponse) {
	st := r.GetStats()
	fmt.Fprintf(w, "%s: %s (%d nodes: %d ok, %d failed)\n", code(r.GetStatus()), r.GetMessage(),
		st.GetTotalNodes(), st.GetSuccessfulNodes(), st.GetFailedNodes())
	for _, n := range r.GetNodeResults() {
		if n.GetStatus() == rmspb.ReturnCode_RETURN_CODE_FAILURE {
			fmt.Fprintf(w, "  %s: %s\n", printable(n.GetNodeId()), n.GetErrorMessage())
		}
	}
	if r.GetJobId() != "" {
		fmt.Fprintf(w, "job %s\n", r.GetJobId())
	}
}
