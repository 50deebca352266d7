package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/store"
)

// The firmware object catalog RPCs (rms-spec §2.5). Only
// DeleteFirmwareObject has a status and a message in its reply, so only it
// answers failures in-band; the others answer gRPC codes (catalogStatus):
// INVALID_ARGUMENT for a request or manifest refused, NOT_FOUND for an
// unknown id, ALREADY_EXISTS for a re-add (the reply has nowhere to say it
// in-band; rms-spec §2.0 maps AlreadyExists to it). Object ids and hardware types
// are ids: longer than 256 characters is INVALID_ARGUMENT.

// maxConfigJSON bounds a manifest: objects are listed with their manifests
// in one reply, so each stays far below a gRPC message.
const maxConfigJSON = 1 << 20

// maxHistoryRacks bounds the racks one history request filters on.
const maxHistoryRacks = 1000

// AddFirmwareObject validates a manifest, stores the object and answers it
// at once, unavailable while its artifacts download in the background.
func (m *rackManager) AddFirmwareObject(ctx context.Context, req *rmspb.AddFirmwareObjectRequest) (*rmspb.AddFirmwareObjectResponse, error) {
	if err := checkIDs(idField{"hardware_type", req.GetHardwareType()}); err != nil {
		return nil, err
	}
	if n := len(req.GetConfigJson()); n > maxConfigJSON {
		return nil, status.Errorf(codes.InvalidArgument, "config_json is %d bytes; at most %d are accepted", n, maxConfigJSON)
	}
	if m.deps.Catalog == nil {
		return nil, errUnavailable("firmware catalog")
	}
	obj, err := m.deps.Catalog.Add(ctx, catalog.AddRequest{
		ConfigJSON: req.GetConfigJson(), HardwareType: req.GetHardwareType(),
		AccessToken: hw.NewSecret(req.GetAccessToken()), SetDefault: req.GetSetDefault(),
	})
	if err != nil {
		return nil, catalogStatus(err)
	}
	return &rmspb.AddFirmwareObjectResponse{Object: firmwareObjectToProto(obj)}, nil
}

// GetFirmwareObject answers one object.
func (m *rackManager) GetFirmwareObject(ctx context.Context, req *rmspb.GetFirmwareObjectRequest) (*rmspb.GetFirmwareObjectResponse, error) {
	if err := checkObjectID("id", req.GetId()); err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil {
		return nil, errUnavailable("firmware catalog")
	}
	obj, err := m.deps.Catalog.Get(ctx, req.GetId())
	if err != nil {
		return nil, catalogStatus(err)
	}
	return &rmspb.GetFirmwareObjectResponse{Object: firmwareObjectToProto(obj)}, nil
}

// ListFirmwareObjects answers the objects the filters select (AND-ed; an
// empty filter selects all), newest first.
func (m *rackManager) ListFirmwareObjects(ctx context.Context, req *rmspb.ListFirmwareObjectsRequest) (*rmspb.ListFirmwareObjectsResponse, error) {
	if err := checkIDs(idField{"hardware_type", req.GetHardwareType()}); err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil {
		return nil, errUnavailable("firmware catalog")
	}
	objs, err := m.deps.Catalog.List(ctx, store.ObjectFilter{OnlyAvailable: req.GetOnlyAvailable(), HardwareType: req.GetHardwareType()})
	if err != nil {
		return nil, catalogStatus(err)
	}
	resp := &rmspb.ListFirmwareObjectsResponse{Objects: make([]*rmspb.FirmwareObject, len(objs))}
	for i, o := range objs {
		resp.Objects[i] = firmwareObjectToProto(o)
	}
	return resp, nil
}

// DeleteFirmwareObject removes an object, cancelling its download and
// removing its cache; the apply history is kept. Its reply has a status:
// a missing or unknown id is FAILURE with a message.
func (m *rackManager) DeleteFirmwareObject(ctx context.Context, req *rmspb.DeleteFirmwareObjectRequest) (*rmspb.DeleteFirmwareObjectResponse, error) {
	id := req.GetId()
	if err := checkIDs(idField{"id", id}); err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil {
		return nil, errUnavailable("firmware catalog")
	}
	if id == "" {
		return &rmspb.DeleteFirmwareObjectResponse{Response: operation(errors.New("id is required"), "")}, nil
	}
	err := m.deps.Catalog.Delete(ctx, id)
	if err != nil {
		m.failed(ctx, "", "", err)
		err = errors.New(clip(err.Error(), maxMessage))
	}
	return &rmspb.DeleteFirmwareObjectResponse{Response: operation(err, fmt.Sprintf("firmware object %q deleted", id))}, nil
}

// SetDefaultFirmwareObject makes an object the default of its hardware
// type, in place of any other.
func (m *rackManager) SetDefaultFirmwareObject(ctx context.Context, req *rmspb.SetDefaultFirmwareObjectRequest) (*rmspb.SetDefaultFirmwareObjectResponse, error) {
	if err := checkObjectID("object_id", req.GetObjectId()); err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil {
		return nil, errUnavailable("firmware catalog")
	}
	obj, err := m.deps.Catalog.SetDefault(ctx, req.GetObjectId())
	if err != nil {
		return nil, catalogStatus(err)
	}
	return &rmspb.SetDefaultFirmwareObjectResponse{Object: firmwareObjectToProto(obj)}, nil
}

// GetFirmwareObjectHistory answers the apply history the filters select,
// newest first; firmware_available says whether the object is in the
// catalog now.
func (m *rackManager) GetFirmwareObjectHistory(ctx context.Context, req *rmspb.GetFirmwareObjectHistoryRequest) (*rmspb.GetFirmwareObjectHistoryResponse, error) {
	racks := req.GetRackIds()
	if len(racks) > maxHistoryRacks {
		return nil, status.Errorf(codes.InvalidArgument, "rack_ids lists %d racks; at most %d are accepted", len(racks), maxHistoryRacks)
	}
	ids := []idField{{"object_id", req.GetObjectId()}}
	for i, r := range racks {
		ids = append(ids, idField{fmt.Sprintf("rack_ids[%d]", i), r})
	}
	if err := checkIDs(ids...); err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil {
		return nil, errUnavailable("firmware catalog")
	}
	recs, err := m.deps.Catalog.History(ctx, store.HistoryFilter{ObjectID: req.GetObjectId(), RackIDs: racks})
	if err != nil {
		return nil, catalogStatus(err)
	}
	resp := &rmspb.GetFirmwareObjectHistoryResponse{Records: make([]*rmspb.FirmwareObjectHistoryRecord, len(recs))}
	for i, r := range recs {
		resp.Records[i] = historyRecordToProto(r)
	}
	return resp, nil
}

// checkObjectID refuses an empty or over-long object id, in an RPC whose
// reply has no status to carry the refusal.
func checkObjectID(field, id string) error {
	if id == "" {
		return status.Errorf(codes.InvalidArgument, "%s is required", field)
	}
	return checkIDs(idField{field, id})
}
