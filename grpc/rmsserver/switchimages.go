package rmsserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

// maxImagesDoc bounds images_json. NVUE's listing of /host/nos-images is a
// few hundred bytes a file; a larger one is rebuilt from the file names.
const maxImagesDoc = 256 << 10

// imagesDoc is images_json in upstream's shape: upstream's
// handle_list_switch_system_images passes list_system_images (NVUE's GET
// /nvue_v1/system/image/files, an object keyed by file name) through. Each
// file's object gets rmsd's build_id beside NVUE's keys: the nvos-X.Y.Z
// its name gives, or "". Keys are never added at the top level, where a
// caller reads every key as a file. A listing that is not an object is
// passed through as it is; one over maxImagesDoc becomes {name: {build_id}}.
func imagesDoc(im platform.SwitchImages) (string, error) {
	var files map[string]json.RawMessage
	if json.Unmarshal([]byte(im.FilesDoc), &files) != nil || files == nil {
		if im.FilesDoc != "" && len(im.FilesDoc) <= maxImagesDoc {
			return im.FilesDoc, nil
		}
		files = map[string]json.RawMessage{}
	}
	if len(im.FilesDoc) > maxImagesDoc {
		files = map[string]json.RawMessage{}
		for _, f := range im.Files {
			files[f.Name] = json.RawMessage(`{}`)
		}
	}
	builds := map[string]string{}
	for _, f := range im.Files {
		builds[f.Name] = f.BuildID
	}
	for name, raw := range files {
		var entry map[string]json.RawMessage
		if json.Unmarshal(raw, &entry) != nil || entry == nil {
			continue // not an object: left as the switch gave it
		}
		if _, taken := entry["build_id"]; !taken {
			entry["build_id"], _ = json.Marshal(builds[name])
		}
		b, err := json.Marshal(entry)
		if err != nil {
			return "", fmt.Errorf("images listing: %w", err)
		}
		files[name] = b
	}
	b, err := json.Marshal(files)
	if err != nil {
		return "", fmt.Errorf("images listing: %w", err)
	}
	return string(b), nil
}

// ListSwitchSystemImages reads the image files staged on a registered
// switch (NVUE /system/image/files; images_json is imagesDoc).
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
	out, err := imagesDoc(im)
	if err != nil {
		return fail(err)
	}
	return &rmspb.ListSwitchSystemImagesResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, ImagesJson: out}, nil
}
