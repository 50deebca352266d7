package hw

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveDescriptor(t *testing.T) {
	tests := []struct {
		name    string
		give    map[string]string
		want    NodeType
		wantErr string
	}{
		{"canonical", map[string]string{"role": "compute", "vendor": "nvidia", "product_family": "gb200"}, ComputeGB200Nvidia, ""},
		{"case, spaces, hyphens and underscores fold",
			map[string]string{"role": " Power-Shelf ", "vendor": "LiteOn", "product_family": "GB_300"}, PowerShelfGB300Liteon, ""},
		{"descriptor-only type", map[string]string{"role": "compute", "vendor": "Supermicro", "product_family": "gb300"}, ComputeGB300Supermicro, ""},
		{"profile and fabric keys are allowed",
			map[string]string{"role": "switch", "vendor": "nvidia", "product_family": "vrnvl72", "inventory_profile": "p1", "fm_config:topology": "x"},
			SwitchVRNVL72Nvidia, ""},
		{"missing role", map[string]string{"vendor": "nvidia", "product_family": "gb200"}, 0, "missing or empty role"},
		{"blank vendor", map[string]string{"role": "compute", "vendor": "  ", "product_family": "gb200"}, 0, "missing or empty vendor"},
		{"unsupported attribute", map[string]string{"role": "compute", "vendor": "nvidia", "product_family": "gb200", "colour": "green"}, 0, `unsupported attribute(s) "colour"`},
		{"unknown combination", map[string]string{"role": "switch", "vendor": "delta", "product_family": "gb200"}, 0, "no supported node type"},
		{"no partial match", map[string]string{"role": "compute", "vendor": "nvidia", "product_family": "gb2000"}, 0, "no supported node type"},
		{"a long value is quoted short", map[string]string{"role": "compute", "vendor": strings.Repeat("v", 100_000), "product_family": "gb200"}, 0,
			`vendor="` + strings.Repeat("v", 64) + `"… (100000 characters) product_family="gb200"`},
		{"many unsupported attributes are counted", map[string]string{"a": "", "b": "", "c": "", "d": "", "e": "", "f": "", "g": ""}, 0,
			`unsupported attribute(s) "a", "b", "c", "d", "e", and 2 more`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveDescriptor(tt.give)
			if tt.wantErr != "" {
				var de *DescriptorError
				if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want DescriptorError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestEveryNodeTypeHasADescriptorThatResolvesBack(t *testing.T) {
	for _, nt := range AllNodeTypes() {
		d := nt.Descriptor()
		if d == nil {
			t.Errorf("%v has no descriptor", nt)
			continue
		}
		got, err := ResolveDescriptor(d)
		if err != nil || got != nt {
			t.Errorf("%v: descriptor %v resolves to %v, %v", nt, d, got, err)
		}
	}
}

func TestDescriptorOnlyTypesTravelAsUnspecified(t *testing.T) {
	if ComputeGB200Wiwynn.Wire() != NodeTypeUnspecified || ComputeGB200Nvidia.Wire() != ComputeGB200Nvidia {
		t.Fatal("Wire() is wrong")
	}
	if ComputeGB300Supermicro.String() != "compute_gb300_supermicro" || ComputeGB300Supermicro.Kind() != KindCompute {
		t.Fatal("descriptor-only type names are wrong")
	}
}

func TestEveryNodeTypeHasAFamily(t *testing.T) {
	for _, nt := range AllNodeTypes() {
		if nt.Family() == "" {
			t.Errorf("%v has no product family", nt)
		}
		if string(nt.Family()) != strings.ToUpper(nt.Descriptor()[AttrProductFamily]) {
			t.Errorf("%v: family %s disagrees with its descriptor %v", nt, nt.Family(), nt.Descriptor())
		}
	}
}
