package rmsserver

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// durationBounds is the upper bound, in seconds, of every caller-supplied
// duration in the API, by the field's full protobuf name. Each is four
// times upstream's default for the field (for a stage's floor, four times
// the stage's default maximum; for the prestage floor, whose default is
// 0, four times the prestage maximum). A request over a bound is refused
// with INVALID_ARGUMENT naming the field and the bound, before anything
// runs: an unbounded wait would hold a rack's nodes, shelves off, for as
// long as the caller asked. TestEveryDurationFieldIsBounded keeps this
// table complete.
var durationBounds = map[protoreflect.FullName]uint32{
	"rack_manager.ExecuteColdRebootRequest.prestage_shutdown_floor_seconds":    1200,
	"rack_manager.ExecuteColdRebootRequest.prestage_shutdown_poll_max_seconds": 1200,
	"rack_manager.ExecuteColdRebootRequest.discharge_floor_seconds":            2400,
	"rack_manager.ExecuteColdRebootRequest.discharge_poll_max_seconds":         2400,
	"rack_manager.ExecuteColdRebootRequest.bmc_up_floor_seconds":               2400,
	"rack_manager.ExecuteColdRebootRequest.bmc_up_poll_max_seconds":            2400,
	"rack_manager.ExecuteColdRebootRequest.nvos_hello_backoff_seconds":         120,
	"rack_manager.ExecuteColdRebootRequest.compute_boot_wait_seconds":          1200,
	"rack_manager.ExecuteColdRebootRequest.poll_interval_seconds":              60,
}

// checkDurations refuses req if any of its top-level duration fields
// (those in durationBounds) is set above its bound.
func checkDurations(req proto.Message) error {
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		max, ok := durationBounds[fd.FullName()]
		if !ok || fd.Kind() != protoreflect.Uint32Kind || !m.Has(fd) {
			continue
		}
		if got := m.Get(fd).Uint(); got > uint64(max) {
			return status.Errorf(codes.InvalidArgument, "%s is %d seconds; at most %d seconds is accepted", fd.Name(), got, max)
		}
	}
	return nil
}
