package ctl

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// callCommand is the generic form of every RPC: the method by name, the
// request as protobuf JSON, the reply printed as protobuf JSON. It reaches
// the RPCs no other command wraps (switch administration, certificates,
// attestation, the scale-up fabric, system validation) with rmsctl's
// target settings, TLS and exit codes.
func (a *app) callCommand() *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "call METHOD",
		Short: "Call any RPC of rack_manager.RackManager or rack_manager_v2.RackManagerV2 with a protobuf JSON request",
		Long: `call sends one request, written as protobuf JSON, to the named RPC and prints the
reply as protobuf JSON (indented; one compact line with -o json).

METHOD is SERVICE/NAME, the service as rack_manager.RackManager or RackManager,
rack_manager_v2.RackManagerV2 or RackManagerV2, or just NAME where only one
service has it. --data takes the request, @FILE reads it from a file, @- from
standard input. A reply whose status (or response.status) is RETURN_CODE_FAILURE
exits 1, as the other commands do.`,
		Example: `  rmsctl call GetVersion
  rmsctl call RackManager/GetScaleUpFabricState -d @node.json
  rmsctl call RackManagerV2/StartSystemValidation -d @- < nodes.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			md, err := findMethod(args[0])
			if err != nil {
				return err
			}
			raw, err := a.requestData(data)
			if err != nil {
				return err
			}
			req := dynamicpb.NewMessage(md.Input())
			if err := protojson.Unmarshal(raw, req); err != nil {
				return usageError("--data is not a protobuf JSON %s: %s", md.Input().FullName(), redactValues(err.Error()))
			}
			rpc := string(md.Name())
			resp := dynamicpb.NewMessage(md.Output())
			path := "/" + string(md.Parent().FullName()) + "/" + rpc
			var trailer metadata.MD
			if err := a.invoke(cmd.Context(), rpc, func(rctx context.Context, _ rmspb.RackManagerClient) error {
				return a.conn.Invoke(rctx, path, req, resp, grpc.Trailer(&trailer))
			}); err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) { writeIndented(w, resp) }); err != nil {
				return err
			}
			return replyFailure(rpc, resp, trailerReason(trailer))
		},
	}
	cmd.Flags().StringVarP(&data, "data", "d", "{}", "the request as protobuf JSON; @FILE reads a file, @- standard input")
	return cmd
}

// services are the two services call reaches.
func services() []protoreflect.ServiceDescriptor {
	return []protoreflect.ServiceDescriptor{
		rmspb.File_rack_manager_rack_manager_proto.Services().ByName("RackManager"),
		rmspbv2.File_rack_manager_v2_rack_manager_v2_proto.Services().ByName("RackManagerV2"),
	}
}

// findMethod resolves METHOD: SERVICE/NAME (the service by full or short
// name) or a NAME that only one service has.
func findMethod(name string) (protoreflect.MethodDescriptor, error) {
	svc, method, qualified := strings.Cut(strings.TrimPrefix(name, "/"), "/")
	if !qualified {
		svc, method = "", svc
	}
	var found []protoreflect.MethodDescriptor
	for _, sd := range services() {
		if qualified && svc != string(sd.FullName()) && svc != string(sd.Name()) {
			continue
		}
		if md := sd.Methods().ByName(protoreflect.Name(method)); md != nil {
			found = append(found, md)
		}
	}
	switch len(found) {
	case 0:
		return nil, usageError("no RPC %q in rack_manager.RackManager or rack_manager_v2.RackManagerV2", name)
	case 1:
		return found[0], nil
	default:
		return nil, usageError("%s is an RPC of both services: name one, e.g. RackManager/%s or RackManagerV2/%s", method, method, method)
	}
}

// requestData is --data: inline JSON, @FILE or @- (standard input).
func (a *app) requestData(data string) ([]byte, error) {
	switch {
	case data == "@-":
		raw, err := io.ReadAll(a.streams.In)
		if err != nil {
			return nil, usageError("read the request from standard input: %v", err)
		}
		return raw, nil
	case strings.HasPrefix(data, "@"):
		raw, err := os.ReadFile(data[1:])
		if err != nil {
			return nil, usageError("read the request: %v", err)
		}
		return raw, nil
	}
	return []byte(data), nil
}

// writeIndented prints a reply as indented protobuf JSON.
func writeIndented(w io.Writer, m *dynamicpb.Message) {
	raw, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true, Multiline: true}.Marshal(m)
	if err != nil {
		fmt.Fprintf(w, "(reply not printable: %v)\n", err)
		return
	}
	fmt.Fprintf(w, "%s\n", raw)
}

// replyFailure is the in-band FAILURE of a reply: its status field, or
// its response's, is RETURN_CODE_FAILURE. Its message is the reply's
// message or error_message, else the reason rmsd sent in the trailer.
func replyFailure(rpc string, m protoreflect.Message, reason string) error {
	for range 2 {
		fields := m.Descriptor().Fields()
		if st := fields.ByName("status"); st != nil && st.Enum() != nil && st.Enum().FullName() == "rack_manager.ReturnCode" {
			code := rmspb.ReturnCode(m.Get(st).Enum())
			msg := reason
			for _, n := range []protoreflect.Name{"message", "error_message"} {
				if f := fields.ByName(n); f != nil && f.Kind() == protoreflect.StringKind && m.Get(f).String() != "" {
					msg = m.Get(f).String()
					break
				}
			}
			return inBand(rpc, code, msg)
		}
		resp := fields.ByName("response")
		if resp == nil || resp.Message() == nil || !m.Has(resp) {
			return nil
		}
		m = m.Get(resp).Message()
	}
	return nil
}
