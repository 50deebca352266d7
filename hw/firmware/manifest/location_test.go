package manifest_test

import (
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

func TestParse_PayloadClassification(t *testing.T) {
	const url = "https://af.example.com/fw/pkg.fwpkg"
	tests := []struct {
		name string
		loc  obj
		want bool
	}{
		{"Firmware", obj{"Type": "Firmware"}, true},
		{"firmware in lower case", obj{"Type": "firmware"}, true},
		{"recovery image", obj{"Type": "Firmware-Recovery"}, false},
		{"certificate", obj{"Type": "Certificate"}, false},
		{"misc", obj{"Type": "Misc"}, false},
		{"Firmware without a Location", obj{"Type": "Firmware", "Location": nil}, false},
		{"Firmware with an empty Location", obj{"Type": "Firmware", "Location": "  "}, false},
		{"no Type, package FileName", obj{"Type": nil, "FileName": "pkg.fwpkg"}, true},
		{"no Type, no FileName, package URL", obj{"Type": ""}, true},
		{"Binary tarball", obj{"Type": "Binary", "FileName": "psu.tar.gz"}, true},
		{"Binary document", obj{"Type": "Binary", "FileName": "notes.pdf"}, false},
		{"no Type, document", obj{"Type": nil, "Location": "https://af.example.com/fw/notes.pdf"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := payload(url)
			for k, v := range tt.loc {
				l[k] = v
			}
			m, err := manifest.Parse(doc(t, "DGXGB200", sku("Switch Tray", entry("CPLD", l))), manifest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(m.Artifacts()) == 1; got != tt.want {
				t.Errorf("downloaded = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParse_FirstPayloadPerComponent(t *testing.T) {
	e := entry("CPLD",
		obj{"Location": nil, "Type": "Certificate", "FileName": "cpld.crt"},
		payload("https://af.example.com/fw/first.fwpkg"),
		payload("https://af.example.com/fw/second.fwpkg"))
	e["SubComponents"] = []any{obj{"Component": "CPLD1", "Locations": []any{payload("https://af.example.com/fw/sub.fwpkg")}}}
	m, err := manifest.Parse(doc(t, "DGXGB200", sku("Switch Tray", e)), manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Artifacts(); len(a) != 1 || a[0].Name != "first.fwpkg" {
		t.Errorf("artifacts %+v, want first.fwpkg only", a)
	}
}

func TestParse_OnlySelectedPayloadsNeedASupportedSource(t *testing.T) {
	// The second payload is never downloaded, so its source is not judged.
	e := entry("CPLD", payload("https://af.example.com/fw/first.fwpkg"),
		obj{"Location": "ftp://old.example.com/second.fwpkg", "Type": "Firmware"})
	if _, err := manifest.Parse(doc(t, "DGXGB200", sku("Switch Tray", e)), manifest.Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestParse_Sources(t *testing.T) {
	tests := []struct {
		name         string
		location     any
		locationType any
		wantKind     manifest.SourceKind
		wantURL      string
		wantPath     string
		wantName     string
		wantString   string
	}{
		{"https", "https://af.example.com/a/p.fwpkg", "HTTPS", manifest.SourceHTTP, "https://af.example.com/a/p.fwpkg", "", "p.fwpkg", ""},
		{"http without LocationType", "http://af.example.com/a/p.fwpkg", nil, manifest.SourceHTTP, "http://af.example.com/a/p.fwpkg", "", "p.fwpkg", ""},
		{"artifactory", "https://af.example.com/artifactory/r/p.fwpkg", "Artifactory", manifest.SourceArtifactory,
			"https://af.example.com/artifactory/r/p.fwpkg", "", "p.fwpkg", ""},
		{"jfrog", "https://af.example.com/r/p.fwpkg", "JFROG", manifest.SourceArtifactory, "https://af.example.com/r/p.fwpkg", "", "p.fwpkg", ""},
		{"query and fragment", "https://af.example.com/a/p.fwpkg?X-Signature=s3cr3t#frag", "https", manifest.SourceHTTP,
			"https://af.example.com/a/p.fwpkg?X-Signature=s3cr3t#frag", "", "p.fwpkg", "https://af.example.com/a/p.fwpkg"},
		{"escaped name", "https://af.example.com/a/p%2Bq.fwpkg", "https", manifest.SourceHTTP, "https://af.example.com/a/p%2Bq.fwpkg", "", "p+q.fwpkg", ""},
		{"file URL", "file:///var/lib/rms/firmware/pkgs/p.fwpkg", "file", manifest.SourceFile, "", "/var/lib/rms/firmware/pkgs/p.fwpkg", "p.fwpkg", ""},
		{"file URL on localhost", "file://localhost/srv/p.fwpkg", nil, manifest.SourceFile, "", "/srv/p.fwpkg", "p.fwpkg", ""},
		{"bare relative path", "pkgs/p.fwpkg", "FILE", manifest.SourceFile, "", "pkgs/p.fwpkg", "p.fwpkg", ""},
		{"bare absolute path", "/srv/firmware/p.fwpkg", nil, manifest.SourceFile, "", "/srv/firmware/p.fwpkg", "p.fwpkg", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := payload("x")
			l["Location"], l["LocationType"] = tt.location, tt.locationType
			m, err := manifest.Parse(doc(t, "DGXGB200", sku("Switch Tray", entry("CPLD", l))), manifest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a := m.Artifacts()[0]
			if a.Source.Kind != tt.wantKind || a.Source.URL != tt.wantURL || a.Source.Path != tt.wantPath || a.Name != tt.wantName {
				t.Errorf("got %+v (%s)", a, a.Source.Kind)
			}
			want := tt.wantString
			if want == "" {
				want = tt.wantURL + tt.wantPath
			}
			if a.Source.String() != want {
				t.Errorf("String() = %q, want %q", a.Source.String(), want)
			}
			if strings.Contains(a.Source.String(), "s3cr3t") {
				t.Error("String shows the query")
			}
		})
	}
}
