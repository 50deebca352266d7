package simrack

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
)

// ReleaseHardwareType is the hardware_type of the simulated release's
// AddFirmwareObject request.
const ReleaseHardwareType = "gb200-nvl"

// Release is the simulated firmware release: its artifact server and what
// it publishes.
type Release struct {
	Server  *artifactsim.Server
	Release simrelease.Release
}

// Close stops the artifact server.
func (r *Release) Close() {
	if r != nil && r.Server != nil {
		r.Server.Close()
	}
}

// StartRelease starts a loopback artifact server publishing a GB200
// release for the simulated racks, so that the whole firmware flow (add,
// download, apply, poll) runs offline.
func StartRelease() (*Release, error) {
	srv, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		return nil, fmt.Errorf("start simulated artifact server: %w", err)
	}
	rel, err := simrelease.Publish(srv, simrelease.Options{})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("publish the simulated firmware release: %w", err)
	}
	return &Release{Server: srv, Release: rel}, nil
}

// ReleaseFile is where the release's AddFirmwareObject request is written:
// path, or simulated-release.json beside the nodes file when path is empty.
func ReleaseFile(path, nodesFile string) string {
	if path != "" {
		return path
	}
	return filepath.Join(filepath.Dir(nodesFile), "simulated-release.json")
}

// WriteReleaseFile writes the release as an AddFirmwareObjectRequest in
// protobuf JSON ({"config_json", "hardware_type", "set_default"}), ready for
// `grpcurl -d @ ... AddFirmwareObject < file`, replacing any previous file
// atomically.
func WriteReleaseFile(path string, r simrelease.Release) error {
	data, err := json.MarshalIndent(map[string]any{
		"config_json": r.ConfigJSON, "hardware_type": ReleaseHardwareType, "set_default": true,
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the simulated release: %w", err)
	}
	if err := replaceFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write simulated release file %s: %w", path, err)
	}
	return nil
}
