package rmsserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/confine"
	"github.com/rmsd/rmsd/hw/platform"
)

// The switch firmware RPCs answer at once, on one registered switch tray
// reached through its host endpoint (NVUE and SSH). Every failure is
// in-band: FAILURE with error_message. Listing takes no lease; a push
// leases the switch from the job engine, so it never lands on a switch a
// job is flashing or rebooting.

// switchComponents maps the wire enum to NVUE component names. UNSPECIFIED,
// UNKNOWN and numbers the enum does not define are refused in-band.
var switchComponents = map[rmspb.SwitchFirmwareComponentType]string{
	rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_BMC:         "bmc",
	rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_FPGA:        "fpga",
	rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_EROT:        "erot",
	rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_CPLD:        "cpld",
	rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_BIOS:        "bios",
	rmspb.SwitchFirmwareComponentType_SWITCH_FIRMWARE_COMPONENT_TYPE_TRANSCEIVER: "transceiver",
}

// switchComponentOf returns the NVUE component a request names.
func switchComponentOf(c rmspb.SwitchFirmwareComponentType) (string, error) {
	name, ok := switchComponents[c]
	if !ok {
		return "", fmt.Errorf("component_type %s is not a switch firmware component: one of BMC, FPGA, EROT, CPLD, BIOS, TRANSCEIVER", c)
	}
	return name, nil
}

// registeredSwitch returns the registered node a switch RPC names: a
// switch tray with a host endpoint.
func (m *rackManager) registeredSwitch(rackID, nodeID string) (hw.Node, error) {
	n, err := m.deps.Racks.Node(rackID, nodeID)
	switch {
	case err != nil:
		return hw.Node{}, err
	case n.Type.Kind() != hw.KindSwitch:
		return hw.Node{}, fmt.Errorf("node %s is a %s node, not a switch", n.ID, n.Type.Name())
	case n.Host == nil || n.Host.Host() == "":
		return hw.Node{}, fmt.Errorf("switch %s has no host_endpoint: NVOS is reached through it", n.ID)
	}
	return n, nil
}

// switchFirmwareDoc is rmsd's part of ListSwitchFirmware's result_json,
// added beside the keys of NVUE's component document (switchFirmwareResult).
type switchFirmwareDoc struct {
	RackID string `json:"rack_id"`
	NodeID string `json:"node_id"`
	// Component is the requested component, NVUEComponent the resource
	// read (cpld is CPLD1).
	Component     string `json:"component"`
	NVUEComponent string `json:"nvue_component"`
	// Version runs now ("N/A" when the switch reports none);
	// InstalledVersion runs after the next power cycle ("" when none).
	Version          string `json:"version"`
	InstalledVersion string `json:"installed_version"`
	// UpdateStatus is "pending_activation" when an installed version
	// waits for a power cycle, "current" when none does, "unknown" when the
	// switch reports no version at all.
	UpdateStatus string   `json:"update_status"`
	Health       string   `json:"health"`
	StagingDir   string   `json:"staging_dir"`
	StagedFiles  []string `json:"staged_files"`
}

// updateStatus derives switchFirmwareDoc.UpdateStatus.
func updateStatus(fw platform.SwitchFirmwareStatus) string {
	switch {
	case fw.Installed != "" && fw.Installed != fw.Version:
		return "pending_activation"
	case fw.Installed == "" && fw.Version == "N/A":
		return "unknown"
	}
	return "current"
}

// ListSwitchFirmware reads one firmware component of a registered switch
// (NVUE /platform/firmware/<component> and its staged files).
func (m *rackManager) ListSwitchFirmware(ctx context.Context, req *rmspb.ListSwitchFirmwareRequest) (*rmspb.ListSwitchFirmwareResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("switch firmware")
	}
	fail := func(err error) (*rmspb.ListSwitchFirmwareResponse, error) {
		m.failed(ctx, req.GetRackId(), req.GetNodeId(), err)
		return &rmspb.ListSwitchFirmwareResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, ErrorMessage: clip(err.Error(), maxMessage)}, nil
	}
	component, err := switchComponentOf(req.GetComponentType())
	if err != nil {
		return fail(err)
	}
	n, err := m.registeredSwitch(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return fail(err)
	}
	var fw platform.SwitchFirmwareStatus
	err = m.deps.Nodes.One(ctx, n, func(ctx context.Context, _ int, d platform.Device) (err error) {
		r, ok := d.(platform.SwitchFirmwareReader)
		if !ok {
			return fmt.Errorf("firmware listing on %s: %w", n.ID, hw.ErrUnsupported)
		}
		fw, err = r.SwitchFirmware(ctx, component)
		return err
	})
	if err != nil {
		return fail(err)
	}
	doc := switchFirmwareDoc{RackID: n.RackID, NodeID: n.ID, Component: fw.Component, NVUEComponent: fw.Name,
		Version: fw.Version, InstalledVersion: fw.Installed, UpdateStatus: updateStatus(fw), Health: fw.Health,
		StagingDir: fw.StagingDir, StagedFiles: append([]string{}, fw.Files...)}
	out, err := switchFirmwareResult(fw.Doc, doc)
	if err != nil {
		return fail(err)
	}
	return &rmspb.ListSwitchFirmwareResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, ResultJson: out}, nil
}

// switchFirmwareResult is ListSwitchFirmware's result_json in upstream's
// shape: upstream's handle_list_switch_firmware passes list_firmware (NVUE's
// GET /nvue_v1/platform/firmware/<component>: actual-firmware,
// installed-firmware, ...) through; rmsd's keys (ours) go beside them.
func switchFirmwareResult(nvueDoc string, ours switchFirmwareDoc) (string, error) {
	b, err := json.Marshal(ours)
	if err != nil {
		return "", fmt.Errorf("firmware listing: %w", err)
	}
	var extra map[string]any
	if err := json.Unmarshal(b, &extra); err != nil {
		return "", fmt.Errorf("firmware listing: %w", err)
	}
	return deviceDoc(nvueDoc, []string{"actual-firmware", "installed-firmware", "version", "Version"}, extra), nil
}

// switchPushDoc is PushSwitchFirmware's result_json.
type switchPushDoc struct {
	RackID     string `json:"rack_id"`
	NodeID     string `json:"node_id"`
	Component  string `json:"component"`
	Filename   string `json:"filename"`
	RemotePath string `json:"remote_path"`
	SizeBytes  int64  `json:"size_bytes"`
	// Status is "pushed", or "already_present" when the switch had a file
	// of that name and size and nothing was sent.
	Status string `json:"status"`
}

// openPushSource opens a push's local file inside firmware_dir: a regular
// file, at least platform.MinStagedFileSize bytes. The caller closes it.
func openPushSource(firmwareDir, name string) (*os.File, int64, error) {
	if firmwareDir == "" {
		return nil, 0, errors.New("no firmware_dir is configured")
	}
	f, err := confine.Open(firmwareDir, name)
	switch {
	case errors.Is(err, confine.ErrEscapes) || errors.Is(err, confine.ErrInvalidName):
		return nil, 0, fmt.Errorf("local_file_path %s is not inside firmware_dir", hw.QuoteShort(name))
	case errors.Is(err, os.ErrNotExist):
		return nil, 0, fmt.Errorf("local_file_path %s not found in firmware_dir", hw.QuoteShort(name))
	case err != nil:
		return nil, 0, fmt.Errorf("local_file_path %s: %w", hw.QuoteShort(name), err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		_ = f.Close()
		return nil, 0, fmt.Errorf("local_file_path %s: %w", hw.QuoteShort(name), err)
	case !info.Mode().IsRegular():
		_ = f.Close()
		return nil, 0, fmt.Errorf("local_file_path %s is not a regular file", hw.QuoteShort(name))
	case info.Size() < platform.MinStagedFileSize:
		_ = f.Close()
		return nil, 0, fmt.Errorf("local_file_path %s is %d bytes; a firmware file is at least %d",
			hw.QuoteShort(name), info.Size(), platform.MinStagedFileSize)
	}
	return f, info.Size(), nil
}

// PushSwitchFirmware copies a file from firmware_dir to a registered
// switch's staging directory for a component, without installing it.
func (m *rackManager) PushSwitchFirmware(ctx context.Context, req *rmspb.PushSwitchFirmwareRequest) (*rmspb.PushSwitchFirmwareResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("switch firmware")
	}
	fail := func(err error) (*rmspb.PushSwitchFirmwareResponse, error) {
		m.failed(ctx, req.GetRackId(), req.GetNodeId(), err)
		return &rmspb.PushSwitchFirmwareResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, ErrorMessage: clip(err.Error(), maxMessage)}, nil
	}
	component, err := switchComponentOf(req.GetComponentType())
	if err != nil {
		return fail(err)
	}
	n, err := m.registeredSwitch(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return fail(err)
	}
	f, size, err := openPushSource(m.deps.FirmwareDir, req.GetLocalFilePath())
	if err != nil {
		return fail(err)
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	st := platform.FirmwareStage{Component: component, FileName: req.GetFilename(), Body: f, Size: size}
	if err := platform.CheckFirmwareStage(st); err != nil {
		return fail(err)
	}
	l, err := m.lease(ctx, "PushSwitchFirmware", nil, []hw.Node{n}, false)
	if err != nil {
		return nil, err
	}
	defer l.release()
	if l.err != nil {
		return fail(l.err)
	}
	var staged platform.StagedFile
	err = m.deps.Nodes.One(l.ctx, n, func(ctx context.Context, _ int, d platform.Device) (err error) {
		s, ok := d.(platform.FirmwareStager)
		if !ok {
			return fmt.Errorf("firmware push to %s: %w", n.ID, hw.ErrUnsupported)
		}
		staged, err = s.StageFirmware(ctx, st)
		return err
	})
	if err != nil {
		return fail(err)
	}
	doc := switchPushDoc{RackID: n.RackID, NodeID: n.ID, Component: component, Filename: st.FileName,
		RemotePath: staged.Path, SizeBytes: staged.Size, Status: "pushed"}
	if staged.Skipped {
		doc.Status = "already_present"
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return fail(err)
	}
	return &rmspb.PushSwitchFirmwareResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, ResultJson: string(out)}, nil
}
