package rmsserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

// switchPartitionDoc is one NVOS partition in ListSwitchSystemImages'
// images_json.
type switchPartitionDoc struct {
	Type      string `json:"type"`      // "partition"
	Partition string `json:"partition"` // "partition1" or "partition2"
	BuildID   string `json:"build_id"`  // "" for an empty partition
	Current   bool   `json:"current"`   // running now
	Next      bool   `json:"next"`      // boots next
}

// switchImageFileDoc is one staged image file in images_json.
type switchImageFileDoc struct {
	Type string `json:"type"` // "file"
	File string `json:"file"`
	// BuildID is what the file installs (nvos-X.Y.Z from its name), ""
	// when its name does not say.
	BuildID string `json:"build_id"`
}

// imagesDoc is images_json: a JSON array (the proto's word), both
// partitions first, then the staged files by name.
func imagesDoc(im platform.SwitchImages) []any {
	out := make([]any, 0, 2+len(im.Files))
	for i, build := range im.Partitions {
		p := i + 1
		out = append(out, switchPartitionDoc{Type: "partition", Partition: "partition" + strconv.Itoa(p), BuildID: build,
			Current: im.Current == p, Next: im.Next == p})
	}
	for _, f := range im.Files {
		out = append(out, switchImageFileDoc{Type: "file", File: f.Name, BuildID: f.BuildID})
	}
	return out
}

// ListSwitchSystemImages reads the NVOS partitions of a registered switch
// and the image files staged on it (NVUE /system/image and its files).
// Synchronous and read-only: no job, no lease.
func (m *rackManager) ListSwitchSystemImages(ctx context.Context, req *rmspb.ListSwitchSystemImagesRequest) (*rmspb.ListSwitchSystemImagesResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("switch system images")
	}
	fail := func(err error) (*rmspb.ListSwitchSystemImagesResponse, error) {
		m.failed(ctx, req.GetRackId(), req.GetNodeId(), err)
		return &rmspb.ListSwitchSystemImagesResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, ErrorMessage: clip(err.Error(), maxMessage)}, nil
	}
	n, err := m.registeredSwitch(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return fail(err)
	}
	var im platform.SwitchImages
	err = m.deps.Nodes.One(ctx, n, func(ctx context.Context, _ int, d platform.Device) (err error) {
		r, ok := d.(platform.SwitchImageReader)
		if !ok {
			return fmt.Errorf("image listing on %s: %w", n.ID, hw.ErrUnsupported)
		}
		im, err = r.SwitchImages(ctx)
		return err
	})
	if err != nil {
		return fail(err)
	}
	out, err := json.Marshal(imagesDoc(im))
	if err != nil {
		return fail(err)
	}
	return &rmspb.ListSwitchSystemImagesResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, ImagesJson: string(out)}, nil
}
