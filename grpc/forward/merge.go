package forward

import (
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// Merging the racks' replies of a split request into the one reply a
// single rmsd would give, by field, whatever the reply's shape:
//
//   - status (a ReturnCode): FAILURE when any rack's is, else SUCCESS;
//   - message, error_message: each rack's, "rack R: ..." joined by "; ";
//   - counts (a message of unsigned integers only, the stats): summed;
//   - node_results of a NodeBatchResponse: in request order (each rack's
//     n-th result is its n-th node's), else the racks' in rack order;
//   - every other list: the racks' entries in rack order; maps: united;
//   - job_id: the cluster parent's for a batch, else none;
//   - other fields: the first rack's that is set.

// rackReply is one rack's reply, or what stands for it when the rack
// answered with an error.
type rackReply struct {
	rack  string
	reply protoreflect.Message
}

// merge builds the reply of method from the racks' replies (in the
// parts' order). order places the first node list's entries (see
// splitByRack); parentID is the cluster parent's job id, "" for none.
func merge(method string, replies []rackReply, order []slot, parentID string) proto.Message {
	out := newReply(method)
	mergeInto(out.ProtoReflect(), replies, order, parentID)
	return out
}

func mergeInto(out protoreflect.Message, replies []rackReply, order []slot, parentID string) {
	fields := out.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		switch {
		case f.Name() == "job_id" && f.Kind() == protoreflect.StringKind && !f.IsList():
			if parentID != "" {
				out.Set(f, protoreflect.ValueOfString(parentID))
			}
		case isStatus(f):
			mergeStatus(out, f, replies)
		case isMessage(f):
			mergeMessages(out, f, replies)
		case f.IsMap():
			m := out.Mutable(f).Map()
			for _, r := range replies {
				r.reply.Get(f).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
					m.Set(k, v)
					return true
				})
			}
		case f.IsList():
			mergeList(out, f, replies, order)
		case f.Message() != nil:
			var subs []rackReply
			for _, r := range replies {
				if r.reply.Has(f) {
					subs = append(subs, rackReply{r.rack, r.reply.Get(f).Message()})
				}
			}
			if len(subs) == 0 {
				continue
			}
			if counts(f.Message()) {
				sumCounts(out.Mutable(f).Message(), subs)
				continue
			}
			mergeInto(out.Mutable(f).Message(), subs, order, parentID)
		default:
			for _, r := range replies {
				if r.reply.Has(f) {
					out.Set(f, r.reply.Get(f))
					break
				}
			}
		}
	}
}

// isStatus reports whether f is a reply's status: a ReturnCode named
// status.
func isStatus(f protoreflect.FieldDescriptor) bool {
	return f.Name() == "status" && f.Enum() != nil && f.Enum().FullName() == rmspb.ReturnCode(0).Descriptor().FullName()
}

// isMessage reports whether f is one of a reply's texts: message or
// error_message.
func isMessage(f protoreflect.FieldDescriptor) bool {
	return (f.Name() == "message" || f.Name() == "error_message") && f.Kind() == protoreflect.StringKind && !f.IsList()
}

func mergeStatus(out protoreflect.Message, f protoreflect.FieldDescriptor, replies []rackReply) {
	st := rmspb.ReturnCode_RETURN_CODE_SUCCESS
	for _, r := range replies {
		if rmspb.ReturnCode(r.reply.Get(f).Enum()) == rmspb.ReturnCode_RETURN_CODE_FAILURE {
			st = rmspb.ReturnCode_RETURN_CODE_FAILURE
		}
	}
	out.Set(f, protoreflect.ValueOfEnum(protoreflect.EnumNumber(st)))
}

func mergeMessages(out protoreflect.Message, f protoreflect.FieldDescriptor, replies []rackReply) {
	var parts []string
	for _, r := range replies {
		if s := r.reply.Get(f).String(); s != "" {
			parts = append(parts, "rack "+r.rack+": "+s)
		}
	}
	if len(parts) > 0 {
		out.Set(f, protoreflect.ValueOfString(strings.Join(parts, "; ")))
	}
}

func mergeList(out protoreflect.Message, f protoreflect.FieldDescriptor, replies []rackReply, order []slot) {
	dst := out.Mutable(f).List()
	lists := make([]protoreflect.List, len(replies))
	oneEach := f.Name() == "node_results"
	for i, r := range replies {
		lists[i] = r.reply.Get(f).List()
	}
	if oneEach {
		// One result per node of each part, in the part's order: placed
		// back in the request's order.
		want := make([]int, len(replies))
		for _, s := range order {
			want[s.part]++
		}
		for i := range lists {
			if lists[i].Len() != want[i] {
				oneEach = false
			}
		}
	}
	if oneEach {
		for _, s := range order {
			dst.Append(lists[s.part].Get(s.pos))
		}
		return
	}
	for _, l := range lists {
		for j := 0; j < l.Len(); j++ {
			dst.Append(l.Get(j))
		}
	}
}

// counts reports whether md holds unsigned counts only (NodeOperationStats).
func counts(md protoreflect.MessageDescriptor) bool {
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		if k := fields.Get(i).Kind(); fields.Get(i).IsList() || (k != protoreflect.Uint32Kind && k != protoreflect.Uint64Kind) {
			return false
		}
	}
	return fields.Len() > 0
}

func sumCounts(out protoreflect.Message, subs []rackReply) {
	fields := out.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		var sum uint64
		for _, s := range subs {
			sum += s.reply.Get(f).Uint()
		}
		if f.Kind() == protoreflect.Uint32Kind {
			out.Set(f, protoreflect.ValueOfUint32(uint32(sum)))
		} else {
			out.Set(f, protoreflect.ValueOfUint64(sum))
		}
	}
}

// failedReply stands for the reply of a rack whose owner answered an
// error, or was not reached: a FAILURE naming why, with a failed result
// for each of its nodes, so that the caller sees them failed in the
// merged reply as it would any other node's refusal.
func failedReply(method, why string, p part) protoreflect.Message {
	r := newReply(method).ProtoReflect()
	fillFailure(r, why, p, 0)
	return r
}

func fillFailure(m protoreflect.Message, why string, p part, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		switch {
		case isStatus(f):
			m.Set(f, protoreflect.ValueOfEnum(protoreflect.EnumNumber(rmspb.ReturnCode_RETURN_CODE_FAILURE)))
		case isMessage(f):
			m.Set(f, protoreflect.ValueOfString(why))
		case f.Name() == "node_results" && f.IsList() && f.Message() != nil:
			l := m.Mutable(f).List()
			for _, id := range p.nodeIDs {
				l.Append(protoreflect.ValueOfMessage((&rmspb.NodeOperationResult{
					NodeId: id, Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, ErrorMessage: why}).ProtoReflect()))
			}
		case !f.IsList() && !f.IsMap() && f.Message() != nil && counts(f.Message()):
			s := m.Mutable(f).Message()
			if t := s.Descriptor().Fields().ByName("total_nodes"); t != nil {
				s.Set(t, protoreflect.ValueOfUint32(uint32(p.nodes)))
			}
			if t := s.Descriptor().Fields().ByName("failed_nodes"); t != nil {
				s.Set(t, protoreflect.ValueOfUint32(uint32(p.nodes)))
			}
		case f.Name() == "response" && !f.IsList() && f.Message() != nil && depth == 0:
			fillFailure(m.Mutable(f).Message(), why, p, depth+1)
		}
	}
}
