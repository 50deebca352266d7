package config

import (
	"strings"
)

// InventoryProfile is what a node must report when a request names the
// profile in its inventory_profile attribute: firmware inventory entries by
// name, and/or how many devices of each Flint family the host must show.
type InventoryProfile struct {
	APNames []string
	// FlintDevices maps a device family (cx7, cx8, bf3_nic) to its expected
	// count. A family that is absent is not checked; 0 means none may exist.
	FlintDevices map[string]int
}

// FlintFamilies are the device families an inventory profile may count.
var flintFamilies = map[string]bool{"cx7": true, "cx8": true, "bf3_nic": true}

// decodeProfiles decodes [workflows.expected_inventory_profiles]. A profile
// is either a list of AP names or a table with ap_names and/or flint_devices.
func (d *decoder) decodeProfiles(path string, raw map[string]any) map[string]InventoryProfile {
	out := map[string]InventoryProfile{}
	for _, rawName := range sortedKeys(raw) {
		name := strings.TrimSpace(rawName)
		where := d.where(join(path, rawName))
		if name == "" {
			d.addf("%s: profile name is empty", where)
			continue
		}
		if _, dup := out[name]; dup {
			d.addf("%s: duplicate profile name %q after trimming", where, name)
			continue
		}
		var p InventoryProfile
		switch v := raw[rawName].(type) {
		case []any:
			p.APNames = d.apNames(where, v)
		case map[string]any:
			for _, key := range sortedKeys(v) {
				switch key {
				case "ap_names":
					list, ok := v[key].([]any)
					if !ok {
						d.addf("%s.ap_names: expected an array of strings, got %s", where, describe(v[key]))
						continue
					}
					p.APNames = d.apNames(where+".ap_names", list)
				case "flint_devices":
					p.FlintDevices = d.flintDevices(where+".flint_devices", v[key])
				default:
					d.addf("unknown key %q", where+"."+key)
				}
			}
		default:
			d.addf("%s: expected an array of AP names or a table, got %s", where, describe(v))
			continue
		}
		if len(p.APNames) == 0 && len(p.FlintDevices) == 0 {
			d.addf("%s: profile needs ap_names, flint_devices or both", where)
		}
		out[name] = p
	}
	return out
}

func (d *decoder) apNames(where string, list []any) []string {
	seen := map[string]bool{}
	var names []string
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			d.addf("%s: expected an array of strings, found %s", where, describe(item))
			continue
		}
		s = strings.TrimSpace(s)
		if s == "" {
			d.addf("%s: AP name is empty", where)
			continue
		}
		if seen[strings.ToLower(s)] {
			continue
		}
		seen[strings.ToLower(s)] = true
		names = append(names, s)
	}
	return names
}

func (d *decoder) flintDevices(where string, val any) map[string]int {
	table, ok := val.(map[string]any)
	if !ok {
		d.addf("%s: expected a table, got %s", where, describe(val))
		return nil
	}
	out := map[string]int{}
	for _, family := range sortedKeys(table) {
		if !flintFamilies[family] {
			d.addf("unknown key %q (known: bf3_nic, cx7, cx8)", where+"."+family)
			continue
		}
		n, ok := asInt(table[family], false)
		if !ok || n < 0 {
			d.addf("%s.%s: expected a non-negative integer, got %s", where, family, describe(table[family]))
			continue
		}
		out[family] = int(n)
	}
	return out
}
