package rmsserver

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// decodeLeniently fills m from data as proto.Unmarshal does, but repairs
// what the wire could not carry instead of refusing the whole input:
// invalid UTF-8 in a string is replaced, a length-delimited field cut short
// keeps what there is of it, and a field that still does not parse is
// dropped. Most byte-level mutations of a seed break a string's UTF-8 or a
// length somewhere; decoded this way they still make a request, so the
// fuzzer spends its time in the handlers.
func decodeLeniently(data []byte, m proto.Message) {
	decodeInto(data, m.ProtoReflect())
}

func decodeInto(data []byte, m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	merge := proto.UnmarshalOptions{Merge: true}
	for {
		f, ok := nextField(&data)
		if !ok {
			return
		}
		if fd := fields.ByNumber(f.num); fd != nil && f.typ == protowire.BytesType {
			f.raw = protowire.AppendBytes(protowire.AppendTag(nil, f.num, f.typ), repairValue(m, fd, f.value))
		}
		_ = merge.Unmarshal(f.raw, m.Interface()) // a field that still does not parse is dropped
	}
}

// wireField is one field as read from the wire.
type wireField struct {
	num   protowire.Number
	typ   protowire.Type
	raw   []byte // the whole field, tag included
	value []byte // a length-delimited field's value
}

// nextField reads one field off the front of data. A length-delimited
// field longer than what remains gets what remains. ok is false when
// nothing more can be read.
func nextField(data *[]byte) (f wireField, ok bool) {
	d := *data
	num, typ, n := protowire.ConsumeTag(d)
	if n < 0 {
		return f, false
	}
	f.num, f.typ = num, typ
	if typ == protowire.BytesType {
		length, ln := protowire.ConsumeVarint(d[n:])
		if ln < 0 {
			return f, false
		}
		end := min(uint64(len(d)), uint64(n+ln)+length)
		f.value, f.raw, *data = d[n+ln:end], d[:end], d[end:]
		if uint64(n+ln)+length > uint64(len(d)) {
			f.raw = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), f.value)
		}
		return f, true
	}
	vn := protowire.ConsumeFieldValue(num, typ, d[n:])
	if vn < 0 {
		return f, false
	}
	f.raw, *data = d[:n+vn], d[n+vn:]
	return f, true
}

// repairValue returns the length-delimited value v of field fd of m,
// repaired. A message value is decoded leniently into a message of the
// generated type (dynamicpb's decoder panics on some malformed map
// entries that the generated one takes).
func repairValue(m protoreflect.Message, fd protoreflect.FieldDescriptor, v []byte) []byte {
	switch {
	case fd.IsMap():
		return repairMapEntry(fd, v)
	case fd.Kind() == protoreflect.StringKind:
		return []byte(strings.ToValidUTF8(string(v), "\uFFFD"))
	case fd.Kind() == protoreflect.MessageKind && fd.IsList():
		return reencode(m.Mutable(fd).List().NewElement().Message(), v)
	case fd.Kind() == protoreflect.MessageKind:
		return reencode(m.NewField(fd).Message(), v)
	}
	return v // packed scalars and bytes parse or are dropped as they are
}

// reencode decodes v leniently into the empty message sub and encodes it
// again.
func reencode(sub protoreflect.Message, v []byte) []byte {
	decodeInto(v, sub)
	out, err := proto.Marshal(sub.Interface())
	if err != nil {
		return nil
	}
	return out
}

// repairMapEntry repairs the strings of one map entry (key = 1, value = 2).
func repairMapEntry(fd protoreflect.FieldDescriptor, v []byte) []byte {
	var out []byte
	for {
		f, ok := nextField(&v)
		if !ok {
			return out
		}
		part := map[protowire.Number]protoreflect.FieldDescriptor{1: fd.MapKey(), 2: fd.MapValue()}[f.num]
		if part != nil && part.Kind() == protoreflect.StringKind && f.typ == protowire.BytesType {
			f.raw = protowire.AppendBytes(protowire.AppendTag(nil, f.num, f.typ), []byte(strings.ToValidUTF8(string(f.value), "\uFFFD")))
		}
		out = append(out, f.raw...)
	}
}

func TestDecodeLeniently(t *testing.T) {
	valid := &rmspb.BatchGetPowerStateRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		describedNode("rack-1", "node-1", map[string]string{"role": "compute", "vendor": "nvidia", "product_family": "gb200"}),
		typedNode("rack-1", "node-2", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(valid)
	if err != nil {
		t.Fatal(err)
	}
	got := &rmspb.BatchGetPowerStateRequest{}
	decodeLeniently(data, got)
	if !proto.Equal(got, valid) {
		t.Fatalf("a valid request decodes as %v", got)
	}

	// Break the UTF-8 of a node id and of a descriptor value, and cut the
	// last node short (in its BMC password, its last field).
	broken := bytes.Replace(data, []byte("node-1"), []byte("node\xff1"), 1)
	broken = bytes.Replace(broken, []byte("nvidia"), []byte("nvi\xc3ia"), 1)
	if !bytes.HasSuffix(broken, []byte("bmc-pw")) {
		t.Fatalf("the request does not end with node-2's password: %q", broken)
	}
	if proto.Unmarshal(broken, &rmspb.BatchGetPowerStateRequest{}) == nil {
		t.Fatal("the broken input is valid protobuf: the test proves nothing")
	}
	got = &rmspb.BatchGetPowerStateRequest{}
	decodeLeniently(broken[:len(broken)-3], got)
	nodes := got.GetNodes().GetNodes()
	if len(nodes) != 2 || nodes[0].GetNodeId() != "node\uFFFD1" || nodes[0].GetNodeDescriptor().GetAttributes()["vendor"] != "nvi\uFFFDia" ||
		nodes[1].GetNodeId() != "node-2" || nodes[1].GetBmcEndpoint().GetCredentials().GetUserPass().GetPassword() != "bmc" {
		t.Fatalf("repaired request = %v", got)
	}
	if _, err := proto.Marshal(got); err != nil {
		t.Fatalf("the repaired request cannot be sent: %v", err)
	}
}
