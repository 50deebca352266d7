package manifest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

func TestParse_RefusesInvalidManifests(t *testing.T) {
	good := func(loc obj) []byte {
		return doc(t, "DGXGB200", sku("Switch Tray", entry("BMC+FPGA+EROT", loc)))
	}
	withLoc := func(fields obj) []byte {
		l := payload("https://af.example.com/a/pkg.fwpkg")
		for k, v := range fields {
			l[k] = v
		}
		return good(l)
	}
	tests := []struct {
		name string
		give []byte
		want []string // substrings of the message
		not  string   // must not appear in it
	}{
		{"empty", []byte("  \n"), []string{"config_json: is empty"}, ""},
		{"array", []byte(`[{"ProductName":"DGXGB200"}]`), []string{"config_json: must be a JSON object, got an array"}, ""},
		{"number", []byte(`42`), []string{"must be a JSON object, got a number"}, ""},
		{"string", []byte(`"DGXGB200"`), []string{"must be a JSON object, got a string"}, ""},
		{"null", []byte(`null`), []string{"must be a JSON object, got null"}, ""},
		{"truncated", []byte(`{"ProductName": "DGXGB200", "Milestones": [`), []string{"is not valid JSON"}, ""},
		{"syntax error", []byte(`{"ProductName": "DGXGB200",, }`), []string{"is not valid JSON (byte"}, ""},
		{"trailing data", []byte(`{"ProductName": "DGXGB200"} {}`), []string{"has data after the JSON object"}, ""},
		{"wrong type", []byte(`{"ProductName": "DGXGB200", "Milestones": [{"Name": 1.3}]}`),
			[]string{"Milestones.Name: expected a string, got a JSON number"}, ""},
		{"no ProductName", []byte(`{"Milestones": [{"Name": "1.0", "BoardSKUs": []}]}`),
			[]string{"ProductName is required"}, ""},
		{"no milestone", []byte(`{"ProductName": "DGXGB200"}`),
			[]string{"Milestones must contain exactly one milestone, got 0"}, ""},
		{"empty milestones", []byte(`{"ProductName": "DGXGB200", "Milestones": []}`),
			[]string{"Milestones must contain exactly one milestone, got 0"}, ""},
		{"two milestones", []byte(`{"ProductName": "DGXGB200", "Milestones": [{"Name": "1.0"}, {"Name": "1.1"}]}`),
			[]string{"Milestones must contain exactly one milestone, got 2"}, ""},
		{"no milestone name", []byte(`{"ProductName": "DGXGB200", "Milestones": [{"Name": " ", "BoardSKUs": [{"Type": "Switch Tray", "Components": {}}]}]}`),
			[]string{"Milestones[0].Name is required"}, ""},
		{"object id with a separator", doc(t, "GB200/../../etc", sku("Switch Tray")),
			[]string{`object id "GB200/../../etc_1.0" (ProductName_Name) must not contain a path separator`}, ""},
		{"object id starting with a dot", doc(t, ".GB200", sku("Switch Tray")),
			[]string{`must not start with "."`}, ""},
		{"object id too long", doc(t, "GB200"+strings.Repeat("x", 300), sku("Switch Tray")),
			[]string{"is longer than 256 characters", "(309 characters)"}, ""},
		{"no board SKUs", []byte(`{"ProductName": "DGXGB200", "Milestones": [{"Name": "1.0"}]}`),
			[]string{"Milestones[0].BoardSKUs must list at least one board SKU"}, ""},
		{"SKU without Components", doc(t, "DGXGB200", obj{"Type": "Switch Tray"}),
			[]string{"Milestones[0].BoardSKUs[0].Components is required"}, ""},
		{"firmware without Component", doc(t, "DGXGB200", sku("Switch Tray", obj{"Locations": []any{}})),
			[]string{"BoardSKUs[0].Components.Firmware[0].Component is required"}, ""},
		{"firmware without Locations", doc(t, "DGXGB200", sku("Switch Tray", obj{"Component": "CPLD"})),
			[]string{"BoardSKUs[0].Components.Firmware[0].Locations is required"}, ""},
		{"software without Component", doc(t, "DGXGB200", obj{"Type": "Switch Tray", "Components": obj{"Software": []any{obj{"Version": "1"}}}}),
			[]string{"Components.Software[0].Component is required"}, ""},
		{"s3 URL", withLoc(obj{"Location": "s3://fw-bucket/gb200/pkg.fwpkg"}),
			[]string{"Firmware[0].Locations[0]: Location \"s3://fw-bucket/gb200/pkg.fwpkg\": s3 sources are not supported"}, ""},
		{"ftp URL", withLoc(obj{"Location": "ftp://files.example.com/pkg.fwpkg"}), []string{"ftp sources are not supported"}, ""},
		{"ftps URL", withLoc(obj{"Location": "ftps://files.example.com/pkg.fwpkg"}), []string{"ftps sources are not supported"}, ""},
		{"sftp URL", withLoc(obj{"Location": "sftp://files.example.com/pkg.fwpkg"}), []string{"sftp sources are not supported"}, ""},
		{"tftp URL", withLoc(obj{"Location": "TFTP://files.example.com/pkg.fwpkg"}), []string{"tftp sources are not supported"}, ""},
		{"other scheme", withLoc(obj{"Location": "gs://bucket/pkg.fwpkg"}), []string{`"gs" sources are not supported`}, ""},
		{"s3 LocationType", withLoc(obj{"LocationType": "S3"}), []string{`LocationType "S3" is not supported`}, ""},
		{"unknown LocationType", withLoc(obj{"LocationType": "nfs"}), []string{`LocationType "nfs" is not supported`}, ""},
		{"credentials in the URL", withLoc(obj{"Location": "https://svc-fw:Hunter2-pw@af.example.com/a/pkg.fwpkg"}),
			[]string{"carries credentials in the URL, which are not supported", "access_token"}, "Hunter2-pw"},
		{"user without password in the URL", withLoc(obj{"Location": "https://svc-fw@af.example.com/a/pkg.fwpkg"}),
			[]string{"carries credentials in the URL"}, ""},
		{"no Sha256", withLoc(obj{"Sha256": nil}), []string{`Location "https://af.example.com/a/pkg.fwpkg" has no Sha256`}, ""},
		{"short Sha256", withLoc(obj{"Sha256": "abc123"}), []string{`Sha256 "abc123" of "https://af.example.com/a/pkg.fwpkg" is not 64 hexadecimal digits`}, ""},
		{"non-hex Sha256", withLoc(obj{"Sha256": strings.Repeat("g", 64)}), []string{"is not 64 hexadecimal digits"}, ""},
		{"cache name ..", withLoc(obj{"Location": "https://af.example.com/a/.."}), []string{`gives the cache file name ".."`}, ""},
		{"cache name from a directory URL", withLoc(obj{"Location": "https://af.example.com/"}), []string{`gives the cache file name "/"`}, ""},
		{"hidden cache name", withLoc(obj{"Location": "https://af.example.com/a/.pkg.fwpkg"}), []string{`gives the cache file name ".pkg.fwpkg"`}, ""},
		{"cache name with a space", withLoc(obj{"Location": "https://af.example.com/a/my%20pkg.fwpkg"}), []string{`gives the cache file name "my pkg.fwpkg"`}, ""},
		{"no host", withLoc(obj{"Location": "https:///a/pkg.fwpkg"}), []string{"names no host"}, ""},
		{"remote file URL", withLoc(obj{"Location": "file://fileserver/share/pkg.fwpkg", "LocationType": "file"}),
			[]string{"names a remote host; file sources must be local"}, ""},
		{"file LocationType with an https URL", withLoc(obj{"LocationType": "file"}),
			[]string{`is an https URL but LocationType is "file"`}, ""},
		{"https LocationType with a local path", withLoc(obj{"Location": "pkgs/pkg.fwpkg"}),
			[]string{`Location "pkgs/pkg.fwpkg" is a local path but LocationType is "HTTPS"`}, ""},
		{"two artifacts, one cache name", doc(t, "DGXGB200", sku("Switch Tray",
			entry("BMC", payload("https://af.example.com/a/pkg.fwpkg")),
			entry("CPLD", payload("https://af.example.com/b/pkg.fwpkg")))),
			[]string{`Firmware[1].Locations[0]: cache file name "pkg.fwpkg" is also that of another artifact ("https://af.example.com/a/pkg.fwpkg")`}, ""},
		{"NVOS image from s3", doc(t, "DGXGB200", obj{"Type": "Switch Tray", "Components": obj{"Software": []any{
			obj{"Component": "NVOS", "Version": "25.02.2553", "Locations": []any{
				obj{"Location": "s3://b/nvos-amd64-25.02.2553.bin", "Type": "Binary", "Sha256": shaOf("x")}}}}}}),
			[]string{"Software[0].Locations[0]: Location \"s3://b/nvos-amd64-25.02.2553.bin\": s3 sources are not supported"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Parse(tt.give, manifest.Options{})
			if err == nil {
				t.Fatalf("accepted: %+v", m)
			}
			if !errors.Is(err, manifest.ErrInvalid) {
				t.Errorf("%v does not match ErrInvalid", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config_json: ") {
				t.Errorf("message %q does not name config_json", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q\n lacks %q", msg, w)
				}
			}
			if tt.not != "" && strings.Contains(msg, tt.not) {
				t.Errorf("message %q shows %q", msg, tt.not)
			}
			if len(msg) > 2048 {
				t.Errorf("message of %d bytes", len(msg))
			}
		})
	}
}

func TestParse_ReportsEveryProblemAtOnce(t *testing.T) {
	var entries []obj
	for i := 0; i < 12; i++ {
		entries = append(entries, entry("C"+strings.Repeat("x", i), obj{
			"Location": "s3://bucket/pkg" + strings.Repeat("x", i) + ".fwpkg", "Type": "Firmware", "Sha256": shaOf("x")}))
	}
	_, err := manifest.Parse(doc(t, "DGXGB200", sku("Switch Tray", entries...)), manifest.Options{})
	var me *manifest.Error
	if !errors.As(err, &me) || len(me.Problems) != 12 {
		t.Fatalf("want 12 problems, got %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "Firmware[9].") || strings.Contains(msg, "Firmware[10].") || !strings.HasSuffix(msg, "; and 2 more") {
		t.Errorf("message does not show the first 10 and count the rest: %s", msg)
	}
}

func TestParse_UnroutedSKUsAreWarningsNotErrors(t *testing.T) {
	bad := obj{"Location": "s3://bucket/never-read.fwpkg", "Type": "Firmware"}
	m, err := manifest.Parse(doc(t, "DGXGB200",
		sku("Switch Tray", entry("CPLD", payload("https://af.example.com/cpld.fwpkg"))),
		sku("Chassis Fan Board", entry("FAN", bad)),
	), manifest.Options{})
	if err != nil {
		t.Fatalf("a SKU no node type takes must not fail the manifest: %v", err)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], `Type "Chassis Fan Board", which routes to no node type`) {
		t.Errorf("warnings %q", m.Warnings)
	}
	if len(m.Artifacts()) != 1 {
		t.Errorf("artifacts of an unrouted SKU are downloaded: %+v", m.Artifacts())
	}
}
