package rmsserver

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// firmwareObjectToProto converts a catalog object: config_json as the
// caller gave it, the metadata its manifest resolves to.
func firmwareObjectToProto(o catalog.Object) *rmspb.FirmwareObject {
	return &rmspb.FirmwareObject{
		Id: o.ID, ConfigJson: o.ConfigJSON, Available: o.Available,
		Created: timestamppb.New(o.Created), Updated: timestamppb.New(o.Updated),
		Metadata: metadataToProto(o.Metadata), HardwareType: o.HardwareType, IsDefault: o.IsDefault,
	}
}

// metadataToProto converts what a manifest offers, field for field. A
// descriptor-only node type (a Wiwynn GB200 compute tray) is
// NODE_TYPE_UNSPECIFIED with its descriptor, which every entry carries.
func metadataToProto(md manifest.Metadata) *rmspb.FirmwareObjectMetadata {
	out := &rmspb.FirmwareObjectMetadata{}
	for _, dc := range md.DeviceComponents {
		pdc := &rmspb.FirmwareObjectDeviceComponents{
			NodeType: rmspb.NodeType(dc.NodeType.Wire()), DeviceType: dc.DeviceType,
			NodeDescriptor: descriptorToProto(dc.NodeType),
		}
		for _, c := range dc.Components {
			pc := &rmspb.FirmwareObjectComponent{Name: c.Name, Version: c.Version, Bundle: c.Bundle, SourceComponent: c.SourceComponent}
			for _, sc := range c.Subcomponents {
				pc.Subcomponents = append(pc.Subcomponents, &rmspb.FirmwareObjectSubcomponent{Name: sc.Name, Version: sc.Version, SkuId: sc.SKUID})
			}
			for _, a := range c.Artifacts {
				pc.Artifacts = append(pc.Artifacts, &rmspb.FirmwareObjectArtifact{FirmwareType: a.FirmwareType, Filename: a.FileName, Target: a.Target, Bundle: a.Bundle})
			}
			pdc.Components = append(pdc.Components, pc)
		}
		out.DeviceComponents = append(out.DeviceComponents, pdc)
	}
	for _, img := range md.SwitchSystemImages {
		out.SwitchSystemImages = append(out.SwitchSystemImages, &rmspb.FirmwareObjectSwitchSystemImage{
			SoftwareType: img.SoftwareType, Version: img.Version, PackageName: img.PackageName,
			ImageFilename: img.ImageFileName, Required: img.Required,
		})
	}
	return out
}

func descriptorToProto(t hw.NodeType) *rmspb.NodeDescriptor {
	attrs := t.Descriptor()
	if attrs == nil {
		return nil
	}
	return &rmspb.NodeDescriptor{Attributes: attrs}
}

// historyRecordToProto converts an apply-history record.
func historyRecordToProto(r catalog.HistoryRecord) *rmspb.FirmwareObjectHistoryRecord {
	return &rmspb.FirmwareObjectHistoryRecord{
		ObjectId: r.ObjectID, RackId: r.RackID, FirmwareType: r.FirmwareType,
		AppliedAt: timestamppb.New(r.AppliedAt), FirmwareAvailable: r.FirmwareAvailable,
		HardwareType: r.HardwareType, NodeIds: r.NodeIDs,
	}
}
