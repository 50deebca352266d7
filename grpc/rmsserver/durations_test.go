package rmsserver

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
)

// Every field of the API that names a duration (…_seconds, a timeout, an
// interval) has a bound in durationBounds, and every bound names a real
// uint32 field: a new duration field cannot arrive unbounded.
func TestEveryDurationFieldIsBounded(t *testing.T) {
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptors)
	walk = func(mds protoreflect.MessageDescriptors) {
		for i := range mds.Len() {
			md := mds.Get(i)
			fields := md.Fields()
			for j := range fields.Len() {
				fd := fields.Get(j)
				name := string(fd.Name())
				if !strings.HasSuffix(name, "_seconds") && !strings.Contains(name, "timeout") && !strings.Contains(name, "interval") {
					continue
				}
				if !strings.HasSuffix(string(md.Name()), "Request") {
					continue // replies report durations, callers do not set them
				}
				seen[fd.FullName()] = true
				if _, ok := durationBounds[fd.FullName()]; !ok {
					t.Errorf("%s has no bound in durationBounds", fd.FullName())
				}
				if fd.Kind() != protoreflect.Uint32Kind {
					t.Errorf("%s is a %s; checkDurations reads uint32 fields only", fd.FullName(), fd.Kind())
				}
			}
			walk(md.Messages())
		}
	}
	for _, f := range []protoreflect.FileDescriptor{rmspb.File_rack_manager_rack_manager_proto,
		rmspbv2.File_rack_manager_v2_rack_manager_v2_proto, adminpb.File_rmsd_admin_admin_proto} {
		walk(f.Messages())
	}
	for name := range durationBounds {
		if !seen[name] {
			t.Errorf("durationBounds names %s, which is no duration field of a request", name)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no duration field found: the walk is broken")
	}
}

// ExecuteColdReboot with a timing override over its bound (4294967295 s,
// "136 years") is INVALID_ARGUMENT naming the field and the bound, and
// nothing is admitted or held; a value at the bound passes the check.
func TestColdRebootTimingOverridesAreBounded(t *testing.T) {
	s := startSimRack(t)
	idle, err := s.engine.Actors(rpcContext(t))
	if err != nil {
		t.Fatal(err)
	}
	huge := uint32(4294967295)
	for _, tc := range []struct {
		set   func(r *rmspb.ExecuteColdRebootRequest)
		field string
		max   uint32
	}{
		{func(r *rmspb.ExecuteColdRebootRequest) { r.DischargeFloorSeconds = &huge }, "discharge_floor_seconds", 2400},
		{func(r *rmspb.ExecuteColdRebootRequest) { r.PollIntervalSeconds = &huge }, "poll_interval_seconds", 60},
		{func(r *rmspb.ExecuteColdRebootRequest) { r.PrestageShutdownFloorSeconds = u32(1201) }, "prestage_shutdown_floor_seconds", 1200},
		{func(r *rmspb.ExecuteColdRebootRequest) { r.NvosHelloBackoffSeconds = u32(121) }, "nvos_hello_backoff_seconds", 120},
	} {
		req := quickColdReboot(nodeSet(s.nodes...))
		tc.set(req)
		_, err := s.client.ExecuteColdReboot(rpcContext(t), req)
		got := req.ProtoReflect().Get(req.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(tc.field))).Uint()
		want := fmt.Sprintf("%s is %d seconds; at most %d seconds is accepted", tc.field, got, tc.max)
		if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != want {
			t.Errorf("%s=%d: %v, want INVALID_ARGUMENT %q", tc.field, got, err, want)
		}
	}
	if l, err := s.engine.Actors(rpcContext(t)); err != nil || len(l.Actors) != len(idle.Actors) || l.HeldNodes != 0 {
		t.Fatalf("a refused cold reboot changed the job engine: %+v, %v", l, err)
	}
	// At the bounds, the request passes the check (compute trays only:
	// it is then refused in-band as not a whole rack, so nothing runs).
	atBounds := quickColdReboot(nodeSet(s.ofKind(hw.KindCompute)...))
	atBounds.DischargeFloorSeconds, atBounds.PollIntervalSeconds = u32(2400), u32(60)
	if _, err := s.client.ExecuteColdReboot(rpcContext(t), atBounds); status.Code(err) == codes.InvalidArgument {
		t.Errorf("values at the bounds: %v", err)
	}
}
