package rmsserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/confine"
	"github.com/rmsd/rmsd/hw/firmware/selector"
	"github.com/rmsd/rmsd/hw/fwupdate"
)

// The direct update RPCs (UpdateFirmware, BatchUpdateFirmware*) name their
// packages themselves: a (target, filename) list, or the single pair, the
// list winning when it is not empty. A filename is relative to
// [workflows] firmware_dir or absolute inside it; nothing outside it is
// ever read.

// targetError is a refusal of a request's firmware targets, with the
// legacy error code UpdateFirmware answers.
type targetError struct {
	code rmspb.FirmwareUpdateError
	msg  string
}

func (e *targetError) Error() string { return e.msg }

func targetErrorf(code rmspb.FirmwareUpdateError, format string, args ...any) error {
	return &targetError{code: code, msg: fmt.Sprintf(format, args...)}
}

// requestTargets picks the request's list, or its single pair.
func requestTargets(list []*rmspb.FirmwareTarget, target, filename string) []*rmspb.FirmwareTarget {
	if len(list) > 0 {
		return list
	}
	if target == "" && filename == "" {
		return nil
	}
	return []*rmspb.FirmwareTarget{{Target: target, Filename: filename}}
}

// switchComponent matches the switch components NVUE installs firmware for.
var switchComponent = regexp.MustCompile(`^(?i:bmc|fpga|erot|cpld[0-9]*|bios|transceiver)$`)

// directTargets resolves a direct update's targets for nodes of kind k:
// each file confined to firmwareDir and present, each target valid for the
// kind. In-band NIC targets (CX7, CX8, BF3_NIC: Flint over the host) are
// taken for compute nodes only; directPlan checks the node's type.
func directTargets(files *firmwareFiles, k hw.Kind, list []*rmspb.FirmwareTarget) ([]fwupdate.Target, error) {
	if len(list) == 0 {
		return nil, targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE,
			"no firmware target: set filename (and target) or firmware_targets")
	}
	out := make([]fwupdate.Target, 0, len(list))
	for i, t := range list {
		where := fmt.Sprintf("firmware_targets[%d]", i)
		if len(list) == 1 {
			where = "firmware target"
		}
		name := strings.TrimSpace(t.GetFilename())
		if name == "" {
			return nil, targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, "%s: filename is required", where)
		}
		target := strings.TrimSpace(t.GetTarget())
		if selector.IsInBandNIC(target) && k != hw.KindCompute {
			return nil, targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE,
				"%s: %s is in-band NIC firmware of compute nodes", where, hw.QuoteShort(target))
		}
		switch k {
		case hw.KindSwitch:
			if !switchComponent.MatchString(target) {
				return nil, targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_TARGET_NOT_FOUND,
					"%s: switch target %s is not one of bmc, fpga, erot, cpld, cpld<N>, bios, transceiver", where, hw.QuoteShort(target))
			}
		case hw.KindPowerShelf:
			target = "" // a shelf package names its own components
		}
		path, err := files.resolve(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		label := target
		if label == "" {
			label = filepath.Base(path)
		}
		out = append(out, fwupdate.Target{Component: label, Target: target, File: path})
	}
	return out, nil
}

// firmwareFile resolves a request's filename inside firmwareDir and checks
// that it is a regular file.
func firmwareFile(firmwareDir, name string) (string, error) {
	if firmwareDir == "" {
		return "", targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND, "no firmware_dir is configured")
	}
	path, err := confine.Path(firmwareDir, name)
	if errors.Is(err, confine.ErrEscapes) || errors.Is(err, confine.ErrInvalidName) {
		return "", targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND,
			"filename %s is not inside firmware_dir", hw.QuoteShort(name))
	}
	if err != nil {
		return "", targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND, "filename %s: %v", hw.QuoteShort(name), err)
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return "", targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND,
			"firmware file %s not found in firmware_dir", hw.QuoteShort(name))
	case !info.Mode().IsRegular():
		return "", targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND,
			"firmware file %s is not a regular file", hw.QuoteShort(name))
	}
	return path, nil
}

// directPlan is a direct update of node n: its targets, checked for the
// node's kind and type, and its inventory profile. files resolves the
// request's firmware files (one per request, shared by its nodes).
func (m *rackManager) directPlan(files *firmwareFiles, n hw.Node, list []*rmspb.FirmwareTarget, activate, force bool) (fwupdate.Plan, error) {
	targets, err := directTargets(files, n.Type.Kind(), list)
	if err != nil {
		return fwupdate.Plan{}, err
	}
	if err := checkInBandTargets(n, targets); err != nil {
		return fwupdate.Plan{}, err
	}
	if err := selector.CheckSupermicroActivation(n.Type, targets, activate); err != nil {
		return fwupdate.Plan{}, targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, "%v", err)
	}
	aps, err := m.expectedAPs(n)
	if err != nil {
		return fwupdate.Plan{}, targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, "%v", err)
	}
	return fwupdate.Plan{Node: n, Targets: targets, Activate: activate, Force: force, ExpectedAPs: aps}, nil
}

// checkInBandTargets admits a direct update's in-band NIC targets: only on
// a node type flashed with Flint, never mixed with out-of-band targets (as
// upstream's update_firmware_group refuses), and only for a node whose
// host_endpoint has the SSH login Flint needs (upstream:
// flint_host_target_config).
func checkInBandTargets(n hw.Node, targets []fwupdate.Target) error {
	inBand := 0
	for _, t := range targets {
		if !selector.IsInBandNIC(t.Component) {
			continue
		}
		inBand++
		if err := selector.CheckInBand(t.Component, n.Type); err != nil {
			return targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, "%v", err)
		}
	}
	switch {
	case inBand == 0:
		return nil
	case inBand != len(targets):
		return targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE,
			"in-band (CX7, CX8, BF3_NIC) and out-of-band firmware targets cannot be updated in one request")
	case n.Host == nil || n.Host.Host() == "" || n.Host.Credentials.Username == "" || n.Host.Credentials.Password.IsZero():
		return targetErrorf(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE,
			"node %s: in-band NIC firmware is flashed with Flint over SSH to the host OS, which needs the node's host_endpoint with a username and password", n.ID)
	}
	return nil
}
