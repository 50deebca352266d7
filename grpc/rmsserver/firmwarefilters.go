package rmsserver

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/selector"
)

// wireNodeType checks a node type sent as a map key (int32): a known,
// specified wire value.
func wireNodeType(field string, k int32) (hw.NodeType, error) {
	t := hw.NodeType(k)
	if t == hw.NodeTypeUnspecified || !t.Valid() || t.Wire() != t {
		return 0, status.Errorf(codes.InvalidArgument, "%s: invalid node type %d", field, k)
	}
	return t, nil
}

// descriptorNodeType resolves a descriptor sent to select a node type.
func descriptorNodeType(field string, d *rmspb.NodeDescriptor) (hw.NodeType, error) {
	if d == nil {
		return 0, status.Errorf(codes.InvalidArgument, "%s: node_descriptor is required", field)
	}
	t, err := hw.ResolveDescriptor(d.GetAttributes())
	if err != nil {
		return 0, status.Errorf(codes.InvalidArgument, "%s: %v", field, err)
	}
	return t, nil
}

// componentFilters converts the component filters of the firmware object
// RPCs (ApplyStored*, Apply*, Compare*); global is the deprecated
// components list (nil where the request has none). An invalid key or
// descriptor is INVALID_ARGUMENT.
func componentFilters(byEnum map[int32]*rmspb.FirmwareObjectComponentFilter,
	byDescriptor []*rmspb.NodeDescriptorFirmwareObjectComponentFilter, global []string) (selector.Filters, error) {
	enum := map[hw.NodeType][]string{}
	for k, f := range byEnum {
		t, err := wireNodeType("component_filters", k)
		if err != nil {
			return selector.Filters{}, err
		}
		enum[t] = f.GetComponents()
	}
	desc := map[hw.NodeType][]string{}
	for _, f := range byDescriptor {
		t, err := descriptorNodeType("node_descriptor_component_filters", f.GetNodeDescriptor())
		if err != nil {
			return selector.Filters{}, err
		}
		desc[t] = append(desc[t], f.GetComponentFilter().GetComponents()...)
	}
	return selector.NewFilters(enum, desc, global), nil
}
