package nvue

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// FirmwareComponent is one entry of /nvue_v1/platform/firmware.
type FirmwareComponent struct {
	Name string
	// Actual is the running version: "actual-firmware", or "version" or
	// "Version" where a release reports it so; "" when none is given.
	Actual    string
	Installed string // version active after the next power cycle ("installed-firmware")
	// Health is "Status": {"Health"} or "Health", when the switch reports
	// one ("" otherwise).
	Health string
	// Doc is the component's document as the switch answered it, compacted
	// (FirmwareComponent only): what upstream's list_firmware passes
	// through.
	Doc string
}

func firmwareFrom(name string, v any) FirmwareComponent {
	fc := FirmwareComponent{Name: name}
	m, ok := v.(map[string]any)
	if !ok {
		return fc
	}
	fc.Actual = firstString(m, "actual-firmware", "version", "Version")
	fc.Installed, _ = m["installed-firmware"].(string)
	if st, ok := m["Status"].(map[string]any); ok {
		fc.Health, _ = st["Health"].(string)
	}
	if fc.Health == "" {
		fc.Health, _ = m["Health"].(string)
	}
	return fc
}

// firstString returns the first of keys whose value in m is a non-empty
// string.
func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// Firmware lists the platform firmware components, sorted by name.
func (c *Client) Firmware(ctx context.Context) ([]FirmwareComponent, error) {
	var m map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/platform/firmware", &m); err != nil {
		return nil, fmt.Errorf("list firmware: %w", err)
	}
	out := make([]FirmwareComponent, 0, len(m))
	for name, v := range m {
		out = append(out, firmwareFrom(name, v))
	}
	slices.SortFunc(out, func(a, b FirmwareComponent) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// componentPath maps RMS component names (bmc, fpga, erot, cpld, bios,
// transceiver, cpld<N>) to the NVUE resource name: "cpld" means CPLD1.
func componentPath(component string) string {
	c := strings.ToUpper(component)
	if c == "CPLD" {
		c = "CPLD1"
	}
	return url.PathEscape(c)
}

// FirmwareComponent reads one component.
func (c *Client) FirmwareComponent(ctx context.Context, component string) (FirmwareComponent, error) {
	var raw json.RawMessage
	name := componentPath(component)
	if err := c.getJSON(ctx, "/nvue_v1/platform/firmware/"+name, &raw); err != nil {
		return FirmwareComponent{}, fmt.Errorf("read firmware %s: %w", component, err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m) // a document that is no object reports no version
	fc := firmwareFrom(name, m)
	fc.Doc = compactDoc(raw)
	return fc, nil
}

// FirmwareFiles lists the staged firmware files of a component.
func (c *Client) FirmwareFiles(ctx context.Context, component string) ([]string, error) {
	var v any
	if err := c.getJSON(ctx, "/nvue_v1/platform/firmware/"+componentPath(component)+"/files", &v); err != nil {
		return nil, fmt.Errorf("list firmware files of %s: %w", component, err)
	}
	return names(v), nil
}

// InstallFirmware starts @install (force false, upstream's choice: force can
// trigger an unplanned reboot) of a staged file and returns the action id.
func (c *Client) InstallFirmware(ctx context.Context, component, file string) (string, error) {
	return c.postAction(ctx, "/nvue_v1/platform/firmware/"+componentPath(component)+"/files/"+url.PathEscape(file),
		"install", map[string]any{"force": false})
}

// names flattens a listing that is either a map (keys are names) or a list
// of strings or {name|file|path} objects; it returns sorted base names.
func names(v any) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k := range t {
			out = append(out, k)
		}
	case []any:
		for _, it := range t {
			switch e := it.(type) {
			case string:
				out = append(out, e)
			case map[string]any:
				for _, k := range []string{"name", "file", "path"} {
					if s, ok := e[k].(string); ok {
						out = append(out, s[strings.LastIndex(s, "/")+1:])
						break
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
