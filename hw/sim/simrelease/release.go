// Package simrelease is a realistic GB200 rack firmware release (switch
// tray, compute tray and power shelf packages and an NVOS image) published
// on a simulated artifact server (hw/sim/artifactsim), with the manifest
// that names it: what `rmsd --simulate` offers for an offline firmware
// flow, and what the firmware tests add, apply and compare. Each package is
// a simulator package carrying its version, so a simulated device flashed
// with it reports the version the manifest promises.
package simrelease

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"text/template"

	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

//go:embed release.json.tmpl
var releaseTemplate string

// Options choose what Publish publishes. The zero value is a
// DGXGB200_1.3.7 release over plain HTTPS locations.
type Options struct {
	// Product is the manifest's ProductName (default "DGXGB200").
	Product string
	// Milestone is its milestone name (default "1.3.7"); the object id is
	// Product_Milestone, and each milestone is published under a path of
	// its own, so several releases can share a server.
	Milestone string
	// LocationType is every payload's LocationType (default "HTTPS"); use
	// "Artifactory" for locations that take the access token.
	LocationType string
	// Size is each package's size in bytes (default 64 KiB).
	Size int
}

// Release is a published release.
type Release struct {
	// ID is the firmware object id the manifest makes, Product_Milestone.
	ID string
	// ConfigJSON is the manifest, for AddFirmwareObject.
	ConfigJSON string
	// The packages, as published (Path for SetFault, Name for the cache).
	SwitchBMC, SwitchCPLD, NVOS, ComputeBMC, HMC, PowerShelf artifactsim.Artifact
}

// Artifacts returns every package of the release, as the manifest names
// them.
func (r Release) Artifacts() []artifactsim.Artifact {
	return []artifactsim.Artifact{r.NVOS, r.SwitchBMC, r.SwitchCPLD, r.HMC, r.ComputeBMC, r.PowerShelf}
}

// Publish publishes the release's packages on s and returns the release.
func Publish(s *artifactsim.Server, o Options) (Release, error) {
	if o.Product == "" {
		o.Product = "DGXGB200"
	}
	if o.Milestone == "" {
		o.Milestone = "1.3.7"
	}
	if o.LocationType == "" {
		o.LocationType = "HTTPS"
	}
	if o.Size <= 0 {
		o.Size = 64 << 10
	}
	base := fmt.Sprintf("artifactory/sw-gb200-fw-generic/%s/%s/", o.Product, o.Milestone)
	pkg := func(name, version string) artifactsim.Artifact {
		return s.PublishPackage(base+name, version, o.Size)
	}
	r := Release{
		ID:         o.Product + "_" + o.Milestone,
		NVOS:       pkg("nvos-amd64-25.02.2553.bin", "25.02.2553"),
		SwitchBMC:  pkg("nvfw_GB200-P4978_0004_250412.1.0_prod-signed.fwpkg", "88.0002.1400"),
		SwitchCPLD: pkg("nvfw_GB200-P4978_0009_250411.1.0_prod-signed.fwpkg", "0.1.0.7"),
		HMC:        pkg("nvfw_GB200-P4975_0004_250405.1.1_prod-signed.fwpkg", "GB200Nvl-25.04-2"),
		ComputeBMC: pkg("nvfw_GB200-P4975_0002_250403.1.0_prod-signed.fwpkg", "GB200Nvl-25.04-1"),
		PowerShelf: pkg("liteon_psu_c1.07.tar", "C1.07"),
	}
	// location is the Locations entry of a package.
	location := func(a artifactsim.Artifact, typ string) (string, error) {
		b, err := json.Marshal(map[string]any{
			"Location": a.URL, "LocationType": o.LocationType, "FileName": a.Name, "Type": typ,
			"Sha256": a.Sha256, "PackageName": a.Name,
		})
		return string(b), err
	}
	tmpl, err := template.New("release").Funcs(template.FuncMap{"location": location}).Parse(releaseTemplate)
	if err != nil {
		return Release{}, fmt.Errorf("simrelease: manifest template: %w", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, struct {
		Release
		Product, Milestone, LocationType string
	}{r, o.Product, o.Milestone, o.LocationType}); err != nil {
		return Release{}, fmt.Errorf("simrelease: manifest: %w", err)
	}
	if !json.Valid(b.Bytes()) {
		return Release{}, fmt.Errorf("simrelease: the manifest template made invalid JSON:\n%s", b.String())
	}
	r.ConfigJSON = b.String()
	return r, nil
}
