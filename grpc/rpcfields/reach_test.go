package rpcfields_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rpcfields"
)

// TestReachOfRequests: the racks, unplaced nodes and job a request names,
// as the authorizer reads them.
func TestReachOfRequests(t *testing.T) {
	creds := &rmspb.Credentials{Auth: &rmspb.Credentials_UserPass{UserPass: &rmspb.UsernamePassword{Username: "u", Password: "p"}}}
	batch := &rmspb.BatchSetPowerStateRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		{RackId: "rack-2", NodeId: "a", BmcEndpoint: &rmspb.Endpoint{Credentials: creds}},
		{NodeId: "b"},
		{RackId: "rack-1", NodeId: "c"},
		{RackId: "rack-2", NodeId: "d"},
	}}}
	for _, tt := range []struct {
		name string
		req  proto.Message
		want rpcfields.Reached
	}{
		{"batch", batch, rpcfields.Reached{Racks: []string{"rack-2", "rack-1", "rack-2"}, Unplaced: []string{"b"}}},
		{"node without rack", &rmspb.GetPowerStateRequest{NodeId: "x"}, rpcfields.Reached{Unplaced: []string{"x"}}},
		{"rack ids", &rmspb.GetFirmwareObjectHistoryRequest{RackIds: []string{"r2", "r1"}}, rpcfields.Reached{Racks: []string{"r2", "r1"}}},
		{"job poll", &rmspb.GetJobStatusRequest{JobId: "j-1"}, rpcfields.Reached{HasJobID: true, JobID: "j-1"}},
		{"job poll without id", &rmspb.GetJobStatusRequest{}, rpcfields.Reached{HasJobID: true}},
		{"names nothing", &rmspb.ListRacksRequest{}, rpcfields.Reached{}},
	} {
		got, ok := rpcfields.Reach(tt.req)
		if !ok || !slices.Equal(got.Racks, tt.want.Racks) || !slices.Equal(got.Unplaced, tt.want.Unplaced) ||
			got.HasJobID != tt.want.HasJobID || got.JobID != tt.want.JobID || got.Partial {
			t.Errorf("%s: got %+v %v, want %+v", tt.name, got, ok, tt.want)
		}
	}
	if _, ok := rpcfields.Reach("not a message"); ok {
		t.Error("a non-message reads as a request")
	}
}

// TestReachOfADeepRequestIsPartial: a rack named deeper than Reach reads
// is not returned, and the request says it may name more.
func TestReachOfADeepRequestIsPartial(t *testing.T) {
	md := deepMessage(t)
	inner := md.Fields().ByName("inner")
	rack := md.Fields().ByName("rack_id")
	nest := func(levels int) protoreflect.Message {
		var m protoreflect.Message
		for i := levels; i >= 0; i-- {
			outer := dynamicpb.NewMessage(md)
			outer.Set(rack, protoreflect.ValueOfString("r"+string(rune('0'+i))))
			if m != nil {
				outer.Set(inner, protoreflect.ValueOfMessage(m))
			}
			m = outer
		}
		return m
	}
	got, _ := rpcfields.Reach(nest(4).Interface())
	if got.Partial || !slices.Equal(got.Racks, []string{"r0", "r1", "r2", "r3", "r4"}) {
		t.Errorf("five levels: %+v", got)
	}
	got, _ = rpcfields.Reach(nest(5).Interface())
	if !got.Partial || !slices.Equal(got.Racks, []string{"r0", "r1", "r2", "r3", "r4"}) {
		t.Errorf("six levels: %+v, want partial", got)
	}
}

// deepMessage is a message type that nests itself: message Deep {
// string rack_id = 1; Deep inner = 2; }.
func deepMessage(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:    proto.String("deep.proto"),
		Package: proto.String("rpcfieldstest"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Deep"),
			Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("rack_id"), Number: proto.Int32(1), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String("rackId")},
				{Name: proto.String("inner"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".rpcfieldstest.Deep"), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String("inner")},
			},
		}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Deep")
}
