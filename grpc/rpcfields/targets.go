package rpcfields

import (
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxDepth bounds how deep Targets and JobIDs look into nested messages:
// enough for a batch's list of nodes (request → nodes → node) and a reply's
// per-node job infos, not a walk of arbitrary payloads.
const maxDepth = 3

// Target is the rack_id and node_id a request names: its own fields, or
// those of its node field (the scale-up fabric RPCs); empty for a batch.
func Target(req any) (rack, node string) {
	pm, ok := req.(proto.Message)
	if !ok {
		return "", ""
	}
	m := pm.ProtoReflect()
	if f := m.Descriptor().Fields().ByName("node"); f != nil && f.Message() != nil && m.Has(f) {
		n := m.Get(f).Message()
		return StringField(n, "rack_id"), StringField(n, "node_id")
	}
	return StringField(m, "rack_id"), StringField(m, "node_id")
}

// Targets are every rack id and node id a request names, each once in the
// order first met: the fields rack_id, rack_ids, node_id and node_ids of the
// request and of the messages it holds (a batch's nodes), up to maxDepth.
func Targets(req any) (racks, nodes []string) {
	pm, ok := req.(proto.Message)
	if !ok {
		return nil, nil
	}
	c := collector{names: map[protoreflect.Name]*[]string{
		"rack_id": &racks, "rack_ids": &racks, "node_id": &nodes, "node_ids": &nodes,
	}}
	walk(pm.ProtoReflect(), maxDepth, nil, c.collect)
	return racks, nodes
}

// JobIDs are the jobs a reply names, each once in the order first met: its
// job_id and parent_job_id fields and those of the messages it holds (a
// batch's per-node job infos), up to maxDepth.
func JobIDs(reply any) []string {
	pm, ok := reply.(proto.Message)
	if !ok {
		return nil
	}
	var jobs []string
	c := collector{names: map[protoreflect.Name]*[]string{"job_id": &jobs, "parent_job_id": &jobs}}
	walk(pm.ProtoReflect(), maxDepth, nil, c.collect)
	return jobs
}

// collector gathers the non-empty values of the string fields named in
// names into their lists, without duplicates.
type collector struct {
	names map[protoreflect.Name]*[]string
	// seen indexes a list once it is long enough for a linear search to
	// cost more than the index (a batch of a whole rack or more).
	seen map[*[]string]map[string]bool
	// wanted caches, per message type met, its string fields named in
	// names (a batch holds a thousand messages of the same few types).
	wanted fieldCache
}

// fieldsOf are the string fields of d named in c.names, in field order.
func (c *collector) fieldsOf(d protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	return c.wanted.of(d, func(f protoreflect.FieldDescriptor) bool {
		_, ok := c.names[f.Name()]
		return ok && f.Kind() == protoreflect.StringKind && !f.IsMap()
	})
}

// linearUpTo is the list length up to which add searches the list itself.
const linearUpTo = 32

func (c *collector) add(into *[]string, v string) {
	if v == "" {
		return
	}
	if len(*into) < linearUpTo {
		if !slices.Contains(*into, v) {
			*into = append(*into, v)
		}
		return
	}
	if c.seen == nil {
		c.seen = map[*[]string]map[string]bool{}
	}
	s := c.seen[into]
	if s == nil {
		s = make(map[string]bool, 2*len(*into))
		for _, id := range *into {
			s[id] = true
		}
		c.seen[into] = s
	}
	if !s[v] {
		s[v] = true
		*into = append(*into, v)
	}
}

// collect adds the values of m's string fields named in c.names.
func (c *collector) collect(m protoreflect.Message, _ int) {
	for _, f := range c.fieldsOf(m.Descriptor()) {
		into := c.names[f.Name()]
		if f.IsList() {
			l := m.Get(f).List()
			for j := range l.Len() {
				c.add(into, l.Get(j).String())
			}
			continue
		}
		c.add(into, m.Get(f).String())
	}
}

// StringField is the first non-empty singular string field of m among
// names.
func StringField(m protoreflect.Message, names ...protoreflect.Name) string {
	for _, n := range names {
		if f := m.Descriptor().Fields().ByName(n); f != nil && f.Kind() == protoreflect.StringKind && f.Cardinality() != protoreflect.Repeated {
			if s := m.Get(f).String(); s != "" {
				return s
			}
		}
	}
	return ""
}
