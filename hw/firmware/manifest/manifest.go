package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// Manifest is a parsed, validated firmware manifest. The document's fields
// are kept as written (Milestone); what rmsd resolved from them is read with
// Metadata and Artifacts. Treat it as read-only.
type Manifest struct {
	// ID is the firmware object id, {ProductName}_{Milestone.Name}, e.g.
	// "DGXGB200_1.3.6". It is usable as a single directory name.
	ID          string
	ProductName string
	// Family is the product family ProductName names, "" when it names
	// none (accepted, as upstream: routing follows each board SKU's Type).
	Family    hw.ProductFamily
	Milestone Milestone
	// Warnings are things accepted but ignored, e.g. a board SKU of unknown
	// Type that applies to no node type. The caller logs them.
	Warnings []string

	meta      Metadata
	artifacts []Artifact
}

// Milestone is the manifest's one release milestone.
type Milestone struct {
	Name      string     `json:"Name"`
	State     string     `json:"State"`
	BoardSKUs []BoardSKU `json:"BoardSKUs"`
}

// BoardSKU is one board SKU: its Type routes its components to node types.
type BoardSKU struct {
	Name       string      `json:"Name"`
	SKUID      string      `json:"SKUID"`
	Type       string      `json:"Type"`
	Components *Components `json:"Components"`
}

// Components are a board SKU's firmware and software entries. Of the
// software entries only NVOS (switch system images) are used.
type Components struct {
	Firmware []Entry `json:"Firmware"`
	Software []Entry `json:"Software"`
}

// Entry is one firmware or software component of a board SKU.
type Entry struct {
	// Component is the raw label, e.g. "BMC+FPGA+EROT", "Powershelf FW" or
	// "NVOS".
	Component string `json:"Component"`
	// Version is the version expected after an update.
	Version string `json:"Version"`
	// Type is the channel ("Prod", "Beta", "Dev"), matched without regard to
	// case against the channel a request asks for (firmware_type).
	Type string `json:"Type"`
	// Bundle and FileNames are given for firmware.
	Bundle        string              `json:"Bundle"`
	FileNames     []string            `json:"FileNames"`
	Locations     []Location          `json:"Locations"`
	SubComponents []SubComponentEntry `json:"SubComponents"`
}

// SubComponentEntry is a sub-version of a component (EROT, CPLD1, PR1 PSU);
// some carry their own packages.
type SubComponentEntry struct {
	Component string     `json:"Component"`
	Version   string     `json:"Version"`
	SKUID     string     `json:"SKUID"`
	FileNames []string   `json:"FileNames"`
	Locations []Location `json:"Locations"`
}

// Location is one file referenced by an entry: a package, a certificate, a
// recovery image, a document.
type Location struct {
	// Location is a URL (http, https, file) or a local path; empty or null
	// means the file cannot be downloaded.
	Location string `json:"Location"`
	// LocationType is http, https, artifactory, jfrog or file, in any case;
	// empty means the Location's scheme decides.
	LocationType string `json:"LocationType"`
	// FileName classifies the file (its extension); it is not the cache name.
	FileName string `json:"FileName"`
	// Type is Firmware, Firmware-Recovery, Certificate, Binary, Misc, ...
	Type string `json:"Type"`
	// Sha256 is the hex digest of the file, in any case.
	Sha256      string `json:"Sha256"`
	PackageName string `json:"PackageName"`
}

// Options tune what Parse resolves. The zero value is upstream's default.
type Options struct {
	// MultiPackage lists node types whose components keep every payload
	// location, not only the first (multi-package components are opt-in).
	MultiPackage []hw.NodeType
}

// maxIDLength bounds the object id, as every id rmsd accepts.
const maxIDLength = 256

// Parse validates configJSON and resolves it. Every problem is reported at
// once in an *Error matching ErrInvalid.
func Parse(configJSON []byte, opts Options) (*Manifest, error) {
	var doc struct {
		ProductName string      `json:"ProductName"`
		Milestones  []Milestone `json:"Milestones"`
	}
	if err := decodeObject(configJSON, &doc); err != nil {
		return nil, err
	}
	var p problems
	m := &Manifest{ProductName: strings.TrimSpace(doc.ProductName)}
	if m.ProductName == "" {
		p.addf("ProductName is required")
	}
	m.Family = familyOf(m.ProductName)
	if len(doc.Milestones) != 1 {
		p.addf("Milestones must contain exactly one milestone, got %d", len(doc.Milestones))
		return nil, p.err()
	}
	m.Milestone = doc.Milestones[0]
	name := strings.TrimSpace(m.Milestone.Name)
	if name == "" {
		p.addf("Milestones[0].Name is required")
	}
	if m.ProductName != "" && name != "" {
		m.ID = m.ProductName + "_" + name
		if reason := badDirName(m.ID); reason != "" {
			p.addf("object id %s (ProductName_Name) %s", hw.QuoteShort(m.ID), reason)
		}
	}
	if len(m.Milestone.BoardSKUs) == 0 {
		p.addf("Milestones[0].BoardSKUs must list at least one board SKU")
	}
	checkRequired(&p, m.Milestone.BoardSKUs)
	if len(p.list) > 0 {
		return nil, p.err()
	}
	r := newResolver(m, opts, &p)
	r.run()
	if err := p.err(); err != nil {
		return nil, err
	}
	m.meta, m.artifacts, m.Warnings = r.meta, r.artifacts, r.warnings
	return m, nil
}

// decodeObject decodes data, which must be exactly one JSON object, into v.
func decodeObject(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return &Error{Problems: []string{"is empty; want a firmware manifest (a JSON object)"}}
	}
	if trimmed[0] != '{' {
		return &Error{Problems: []string{"must be a JSON object, got " + jsonKind(trimmed[0])}}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return &Error{Problems: []string{describeJSONError(err)}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Problems: []string{"has data after the JSON object"}}
	}
	return nil
}

func jsonKind(first byte) string {
	switch {
	case first == '[':
		return "an array"
	case first == '"':
		return "a string"
	case first == 't' || first == 'f':
		return "a boolean"
	case first == 'n':
		return "null"
	case first == '-' || (first >= '0' && first <= '9'):
		return "a number"
	default:
		return "something that is not JSON"
	}
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("is not valid JSON (byte %d): %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "a value"
		}
		return fmt.Sprintf("%s: expected %s, got a JSON %s", field, goKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "is not valid JSON: it ends too early"
	default:
		return fmt.Sprintf("is not valid JSON: %v", err)
	}
}

func goKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "ptr":
		return "an object"
	default:
		return k
	}
}

// checkRequired reports every required field that is absent below the
// milestone (rms-spec §5.2).
func checkRequired(p *problems, skus []BoardSKU) {
	for i, sku := range skus {
		at := fmt.Sprintf("Milestones[0].BoardSKUs[%d]", i)
		if sku.Components == nil {
			p.addf("%s.Components is required", at)
			continue
		}
		for j, fw := range sku.Components.Firmware {
			fat := fmt.Sprintf("%s.Components.Firmware[%d]", at, j)
			if strings.TrimSpace(fw.Component) == "" {
				p.addf("%s.Component is required", fat)
			}
			if fw.Locations == nil {
				p.addf("%s.Locations is required", fat)
			}
		}
		for j, sw := range sku.Components.Software {
			if strings.TrimSpace(sw.Component) == "" {
				p.addf("%s.Components.Software[%d].Component is required", at, j)
			}
		}
	}
}

// badDirName says why id cannot name a cache directory, or "".
func badDirName(id string) string {
	switch {
	case len(id) > maxIDLength:
		return fmt.Sprintf("is longer than %d characters", maxIDLength)
	case strings.ContainsAny(id, `/\`):
		return "must not contain a path separator"
	case strings.HasPrefix(id, "."):
		return `must not start with "."`
	case strings.IndexFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return "must not contain control characters"
	}
	return ""
}

// Metadata returns what the object offers, for FirmwareObject.metadata.
func (m *Manifest) Metadata() Metadata { return m.meta.clone() }

// Artifacts returns every downloadable payload the object needs, each once,
// in the order the manifest first references them. The object is available
// when all of them are downloaded and verified.
func (m *Manifest) Artifacts() []Artifact { return append([]Artifact(nil), m.artifacts...) }
