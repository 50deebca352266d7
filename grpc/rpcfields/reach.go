package rpcfields

import (
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxReachDepth bounds how deep Reach looks into nested messages
// (NodeSet.nodes[].rack_id is depth 2).
const maxReachDepth = 4

// Reached is what a request names, read for deciding which racks it
// reaches: the racks it names and the nodes it names without their rack.
type Reached struct {
	// Racks are the values of the rack_id fields of the request and of the
	// messages it holds, and of their rack_ids lists, in the order met,
	// repeats included.
	Racks []string
	// Unplaced are the node_id values of the messages that name a node but
	// no rack_id, in the order met.
	Unplaced []string
	// HasJobID says the request has a job_id field of its own (a job
	// status poll), JobID its value.
	HasJobID bool
	JobID    string
	// Partial says a message lay deeper than Reach reads: the request may
	// name more than it returns.
	Partial bool
}

// Reach reads what req names, down to maxReachDepth levels, entering only
// the messages that can name a rack or a node (not endpoints, credentials
// or filters). ok is false when req is not a protobuf message.
func Reach(req any) (r Reached, ok bool) {
	pm, ok := req.(proto.Message)
	if !ok {
		return Reached{}, false
	}
	complete := walk(pm.ProtoReflect(), maxReachDepth, namesPlaces, func(m protoreflect.Message, depth int) {
		if rack := StringField(m, "rack_id"); rack != "" {
			r.Racks = append(r.Racks, rack)
		} else if node := StringField(m, "node_id"); node != "" {
			r.Unplaced = append(r.Unplaced, node)
		}
		fields := m.Descriptor().Fields()
		if f := fields.ByName("job_id"); depth == 0 && f != nil && f.Kind() == protoreflect.StringKind && !f.IsList() {
			r.HasJobID, r.JobID = true, m.Get(f).String()
		}
		if f := fields.ByName("rack_ids"); f != nil && f.IsList() && f.Kind() == protoreflect.StringKind {
			list := m.Get(f).List()
			for i := range list.Len() {
				r.Racks = append(r.Racks, list.Get(i).String())
			}
		}
	})
	r.Partial = !complete
	return r, true
}

// placeNaming memoizes namesPlaces by message name.
var placeNaming sync.Map // protoreflect.FullName -> bool

// namesPlaces reports whether messages of md can hold a rack_id, rack_ids
// or node_id field, themselves or in the messages they nest (not through
// maps): Reach enters only those.
func namesPlaces(md protoreflect.MessageDescriptor) bool {
	if v, ok := placeNaming.Load(md.FullName()); ok {
		return v.(bool)
	}
	found := searchPlaces(md, map[protoreflect.FullName]bool{}, 0)
	placeNaming.Store(md.FullName(), found)
	return found
}

func searchPlaces(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool, depth int) bool {
	if seen[md.FullName()] || depth > maxReachDepth {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for _, name := range []protoreflect.Name{"rack_id", "rack_ids", "node_id"} {
		if f := fields.ByName(name); f != nil && f.Kind() == protoreflect.StringKind {
			return true
		}
	}
	for i := range fields.Len() {
		if f := fields.Get(i); f.Message() != nil && !f.IsMap() && searchPlaces(f.Message(), seen, depth+1) {
			return true
		}
	}
	return false
}
