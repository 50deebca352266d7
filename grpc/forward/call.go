package forward

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/member/rackpb"
)

// forwardedMetadata are the incoming metadata keys a Forward carries: ids
// that tie the owner's logs to the caller's. Never credentials: the
// receiving member authorised the call, and nothing else is passed on.
var forwardedMetadata = []string{"x-request-id", "traceparent", "tracestate", "user-agent"}

// messageTypes are each method's request and reply types, by full method
// name, read once from the services' descriptors.
var messageTypes = func() map[string][2]protoreflect.MessageType {
	out := map[string][2]protoreflect.MessageType{}
	for _, svc := range []string{rmspb.RackManager_ServiceDesc.ServiceName, rmspbv2.RackManagerV2_ServiceDesc.ServiceName} {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
		if err != nil {
			panic(fmt.Sprintf("forward: service %s is not registered: %v", svc, err))
		}
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := 0; i < methods.Len(); i++ {
			m := methods.Get(i)
			in, err1 := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
			outT, err2 := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
			if err := errors.Join(err1, err2); err != nil {
				panic(fmt.Sprintf("forward: types of %s: %v", m.FullName(), err))
			}
			out["/"+svc+"/"+string(m.Name())] = [2]protoreflect.MessageType{in, outT}
		}
	}
	return out
}()

// newRequest and newReply are empty messages of method's types; nil for
// an unknown method.
func newRequest(method string) proto.Message {
	if t, ok := messageTypes[method]; ok {
		return t[0].New().Interface()
	}
	return nil
}

func newReply(method string) proto.Message {
	if t, ok := messageTypes[method]; ok {
		return t[1].New().Interface()
	}
	return nil
}

// unreachable is the status of a call whose owner did not answer.
func unreachable(rack string) error {
	return status.Error(codes.Unavailable, fmt.Sprintf("rack %s: owner not reachable; retry", rack))
}

// outcome is one forwarded call's answer: a reply, or an error status,
// and the reason of an in-band failure.
type outcome struct {
	reply  proto.Message
	err    error
	reason string
	// logged is set when the owner logged the failure at warn with its
	// cause: an in-band failure (its handlers log every one), or an error
	// status Serve logs at warn. An err the owner answered is marked
	// rmsserver.LoggedElsewhere.
	logged bool
}

// caller is what the receiving member tells the owner about a call.
type caller struct {
	self     string
	identity string
	metadata map[string]string
	deadline int64
}

// callerOf reads the caller of the RPC running under ctx.
func callerOf(ctx context.Context, self string) caller {
	c := caller{self: self, identity: callerid.FromContext(ctx).String()}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for _, k := range forwardedMetadata {
			if v := md.Get(k); len(v) > 0 {
				if c.metadata == nil {
					c.metadata = map[string]string{}
				}
				c.metadata[k] = v[0]
			}
		}
	}
	if d, ok := ctx.Deadline(); ok {
		c.deadline = d.UnixNano()
	}
	return c
}

// forwardCall sends req for method to rack's owner and decodes its answer.
func forwardCall(ctx context.Context, cl Cluster, from caller, rack, method string, req proto.Message) outcome {
	body, err := proto.Marshal(req)
	if err != nil {
		return outcome{err: status.Error(codes.Internal, fmt.Sprintf("encode %s request: %v", method, err))}
	}
	rep, err := cl.Forward(ctx, &rackpb.Forward{
		Method: method, Request: body, Metadata: from.metadata, Caller: from.identity,
		DeadlineUnixNano: from.deadline, RackId: rack, FromMember: from.self,
	})
	if err != nil {
		if ctx.Err() != nil {
			return outcome{err: status.FromContextError(ctx.Err()).Err()}
		}
		return outcome{err: unreachable(rack)}
	}
	if code := codes.Code(rep.GetCode()); code != codes.OK {
		err := status.Error(code, rep.GetMessage())
		// A reply with an epoch was served under the owner's lease, by
		// Serve, which logged it; one without is the owner grain's own
		// answer (UNAVAILABLE while the rack changes hands), logged by
		// nobody but this member.
		if rep.GetEpoch() == 0 {
			return outcome{err: err}
		}
		return outcome{err: rmsserver.LoggedElsewhere(err), logged: servedLevel(code) == zerolog.WarnLevel}
	}
	reply := newReply(method)
	if err := proto.Unmarshal(rep.GetReply(), reply); err != nil {
		return outcome{err: status.Error(codes.Internal, fmt.Sprintf("rack %s: decode the owner's %s reply: %v", rack, method, err))}
	}
	// Only the owner's handlers answer a reply, and they log its in-band
	// failure.
	return outcome{reply: reply, reason: rep.GetReason(), logged: rep.GetReason() != ""}
}

// forwardParts forwards each part to its rack's owner, at once, and
// returns their outcomes in the parts' order.
func forwardParts(ctx context.Context, cl Cluster, from caller, method string, parts []part) []outcome {
	out := make([]outcome, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = forwardCall(ctx, cl, from, p.rack, method, p.req)
		}()
	}
	wg.Wait()
	return out
}

// deadlineOf is the context deadline a Forward carries, zero for none.
func deadlineOf(fwd *rackpb.Forward) time.Time {
	if fwd.GetDeadlineUnixNano() == 0 {
		return time.Time{}
	}
	return time.Unix(0, fwd.GetDeadlineUnixNano())
}

// methodName is the method part of a full method name, for messages.
func methodName(full string) string {
	return full[strings.LastIndexByte(full, '/')+1:]
}
