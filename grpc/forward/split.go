package forward

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/rpcfields"
)

// A request names its racks in its node lists: a NodeSet's nodes (most
// batch RPCs), a repeated target message (SPDM evidence), each entry with
// its own rack_id. Splitting keeps every other field of the request as it
// is in each part, so it works for every request shape without a case per
// RPC.

// nodeList is one list of rack-bearing entries in a request: the
// repeated field list, inside the singular message field holder when
// holder is set.
type nodeList struct {
	holder protoreflect.FieldDescriptor // nil: list is the request's own
	list   protoreflect.FieldDescriptor
}

// nodeListsOf finds the node lists of a request type.
func nodeListsOf(md protoreflect.MessageDescriptor) []nodeList {
	var out []nodeList
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		switch {
		case f.IsList() && hasRack(f.Message()):
			out = append(out, nodeList{list: f})
		case !f.IsList() && !f.IsMap() && f.Message() != nil:
			inner := f.Message().Fields()
			for j := 0; j < inner.Len(); j++ {
				if g := inner.Get(j); g.IsList() && hasRack(g.Message()) {
					out = append(out, nodeList{holder: f, list: g})
				}
			}
		}
	}
	return out
}

// hasRack reports whether md is a message with a string rack_id.
func hasRack(md protoreflect.MessageDescriptor) bool {
	if md == nil {
		return false
	}
	f := md.Fields().ByName("rack_id")
	return f != nil && f.Kind() == protoreflect.StringKind && !f.IsList()
}

// entries returns the list's entries in m (nil when it has none).
func (l nodeList) entries(m protoreflect.Message) protoreflect.List {
	if l.holder != nil {
		if !m.Has(l.holder) {
			return nil
		}
		m = m.Get(l.holder).Message()
	}
	if !m.Has(l.list) {
		return nil
	}
	return m.Get(l.list).List()
}

// rackOf is an entry's rack_id.
func rackOf(entry protoreflect.Value) string {
	return rpcfields.StringField(entry.Message(), "rack_id")
}

// racksOf are the racks a request names, each once, in the order first
// named: its node lists' racks when they name any, else the rack its
// other fields name (rack_id, node.rack_id).
func racksOf(req proto.Message) []string {
	m := req.ProtoReflect()
	var racks []string
	seen := map[string]bool{}
	for _, l := range nodeListsOf(m.Descriptor()) {
		list := l.entries(m)
		if list == nil {
			continue
		}
		for i := 0; i < list.Len(); i++ {
			if r := rackOf(list.Get(i)); r != "" && !seen[r] {
				seen[r] = true
				racks = append(racks, r)
			}
		}
	}
	if len(racks) > 0 {
		return racks
	}
	if r, _ := rpcfields.Target(req); r != "" {
		return []string{r}
	}
	return nil
}

// part is one rack's share of a split request.
type part struct {
	rack string
	req  proto.Message
	// nodes counts the entries of the request's first node list in this
	// part.
	nodes int
	// nodeIDs are those entries' node_id, in request order.
	nodeIDs []string
}

// splitByRack splits req into one request per rack of racks (racksOf(req),
// at least two), in that order. Each part is req with its node lists cut
// to the rack's entries; an entry without a rack_id goes with the first
// rack, whose owner answers it as a single rmsd would. A top-level rack_id
// that is set becomes the part's rack. order maps each entry of the first
// node list, in request order, to its part and position there.
func splitByRack(req proto.Message, racks []string) (parts []part, order []slot) {
	index := make(map[string]int, len(racks))
	for i, r := range racks {
		index[r] = i
	}
	m := req.ProtoReflect()
	lists := nodeListsOf(m.Descriptor())
	parts = make([]part, len(racks))
	for i, r := range racks {
		c := proto.Clone(req)
		cm := c.ProtoReflect()
		for _, l := range lists {
			if entries := l.entries(cm); entries != nil {
				entries.Truncate(0)
			}
		}
		if f := cm.Descriptor().Fields().ByName("rack_id"); f != nil && f.Kind() == protoreflect.StringKind && !f.IsList() && cm.Get(f).String() != "" {
			cm.Set(f, protoreflect.ValueOfString(r))
		}
		parts[i] = part{rack: r, req: c}
	}
	for li, l := range lists {
		src := l.entries(m)
		if src == nil {
			continue
		}
		for i := 0; i < src.Len(); i++ {
			e := src.Get(i)
			p := index[rackOf(e)] // "" (no rack) is the first part
			dst := parts[p].req.ProtoReflect()
			var holder protoreflect.Message = dst
			if l.holder != nil {
				holder = dst.Mutable(l.holder).Message()
			}
			holder.Mutable(l.list).List().Append(protoreflect.ValueOfMessage(proto.Clone(e.Message().Interface()).ProtoReflect()))
			if li == 0 {
				order = append(order, slot{part: p, pos: parts[p].nodes})
				parts[p].nodes++
				parts[p].nodeIDs = append(parts[p].nodeIDs, rpcfields.StringField(e.Message(), "node_id"))
			}
		}
	}
	return parts, order
}

// slot is where one entry of a request went: its part and its position
// among the part's entries.
type slot struct{ part, pos int }
