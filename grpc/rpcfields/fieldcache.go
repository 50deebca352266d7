package rpcfields

import "google.golang.org/protobuf/reflect/protoreflect"

// fieldCache keeps, per message type met, the fields a walk picks of it
// (a batch holds a thousand messages of the same few types, so each
// type's fields are looked at once per walk).
type fieldCache map[protoreflect.MessageDescriptor][]protoreflect.FieldDescriptor

// of returns the fields of d that keep accepts, in field order, computed
// once per d.
func (c *fieldCache) of(d protoreflect.MessageDescriptor, keep func(protoreflect.FieldDescriptor) bool) []protoreflect.FieldDescriptor {
	if fs, ok := (*c)[d]; ok {
		return fs
	}
	var out []protoreflect.FieldDescriptor
	fields := d.Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); keep(f) {
			out = append(out, f)
		}
	}
	if *c == nil {
		*c = fieldCache{}
	}
	(*c)[d] = out
	return out
}
