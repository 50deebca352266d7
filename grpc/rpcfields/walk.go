package rpcfields

import "google.golang.org/protobuf/reflect/protoreflect"

// walk is the one walker of request and reply messages: it calls visit on
// m and then, depth first in field order, on every message m holds through
// singular and repeated message fields (never maps), down to maxDepth
// levels below m. It enters only the fields whose message type enter
// accepts (nil accepts all). It reports whether it reached every message
// it would enter: false when a set one lies deeper than maxDepth.
func walk(m protoreflect.Message, maxDepth int, enter func(protoreflect.MessageDescriptor) bool, visit func(m protoreflect.Message, depth int)) bool {
	w := walker{maxDepth: maxDepth, enter: enter, visit: visit, complete: true}
	w.walk(m, 0)
	return w.complete
}

type walker struct {
	maxDepth int
	enter    func(protoreflect.MessageDescriptor) bool
	visit    func(protoreflect.Message, int)
	complete bool
	// into caches, per message type met, the fields walk may enter: a
	// batch holds a thousand messages of the same few types.
	into fieldCache
}

// entered are the singular and repeated message fields of d that enter
// accepts, in field order.
func (w *walker) entered(d protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	return w.into.of(d, func(f protoreflect.FieldDescriptor) bool {
		return f.Message() != nil && !f.IsMap() && (w.enter == nil || w.enter(f.Message()))
	})
}

func (w *walker) walk(m protoreflect.Message, depth int) {
	if !m.IsValid() {
		return
	}
	if depth > w.maxDepth {
		w.complete = false
		return
	}
	w.visit(m, depth)
	for _, f := range w.entered(m.Descriptor()) {
		if !m.Has(f) {
			continue
		}
		if f.IsList() {
			l := m.Get(f).List()
			for j := range l.Len() {
				w.walk(l.Get(j).Message(), depth+1)
			}
			continue
		}
		w.walk(m.Get(f).Message(), depth+1)
	}
}
