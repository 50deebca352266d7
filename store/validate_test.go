package store

import (
	"errors"
	"strings"
	"testing"
)

func TestArtifactStatusValidate(t *testing.T) {
	tests := []struct {
		name string
		give ArtifactStatus
		want ArtifactState // "" when invalid
	}{
		{"zero is pending", ArtifactStatus{}, ArtifactPending},
		{"downloading", ArtifactStatus{State: ArtifactDownloading, LocalPath: "/fw/.part"}, ArtifactDownloading},
		{"ready with a path", ArtifactStatus{State: ArtifactReady, LocalPath: "/fw/a"}, ArtifactReady},
		{"ready without a path", ArtifactStatus{State: ArtifactReady}, ""},
		{"failed with an error", ArtifactStatus{State: ArtifactFailed, Error: "404"}, ArtifactFailed},
		{"failed without an error", ArtifactStatus{State: ArtifactFailed}, ""},
		{"pending with an error", ArtifactStatus{Error: "404"}, ""},
		{"ready with an error", ArtifactStatus{State: ArtifactReady, LocalPath: "/fw/a", Error: "404"}, ""},
		{"unknown state", ArtifactStatus{State: "Ready"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.give.Validate()
			if tt.want == "" {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("Validate(%+v) = %v, want ErrInvalid", tt.give, err)
				}
				return
			}
			if err != nil || got.State != tt.want {
				t.Errorf("Validate(%+v) = %+v, %v; want state %s", tt.give, got, err, tt.want)
			}
		})
	}
}

func TestFirmwareObjectValidate(t *testing.T) {
	valid := func() FirmwareObject {
		return FirmwareObject{ID: "DGXGB200_1.3.6", ConfigJSON: `{"ProductName":"DGXGB200"}`, Artifacts: []Artifact{
			{Name: "a.fwpkg", SHA256: strings.Repeat("AB", 32)}, {Name: "b.fwpkg"},
		}}
	}
	tests := []struct {
		name string
		give func(o *FirmwareObject)
		ok   bool
	}{
		{"valid", func(*FirmwareObject) {}, true},
		{"no artifacts", func(o *FirmwareObject) { o.Artifacts = nil }, true},
		{"available", func(o *FirmwareObject) { o.Available = true }, true},
		{"empty id", func(o *FirmwareObject) { o.ID = "" }, false},
		{"config not JSON", func(o *FirmwareObject) { o.ConfigJSON = "{" }, false},
		{"config empty", func(o *FirmwareObject) { o.ConfigJSON = "" }, false},
		{"available with a reason", func(o *FirmwareObject) { o.Available, o.UnavailableReason = true, "x" }, false},
		{"artifact without a name", func(o *FirmwareObject) { o.Artifacts[0].Name = "" }, false},
		{"artifact twice", func(o *FirmwareObject) { o.Artifacts[1].Name = "a.fwpkg" }, false},
		{"digest of 63 digits", func(o *FirmwareObject) { o.Artifacts[0].SHA256 = strings.Repeat("a", 63) }, false},
		{"digest not hex", func(o *FirmwareObject) { o.Artifacts[0].SHA256 = strings.Repeat("z", 64) }, false},
		{"artifact failed without an error", func(o *FirmwareObject) { o.Artifacts[1].State = ArtifactFailed }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			give := valid()
			tt.give(&give)
			got, err := give.Validate()
			if !tt.ok {
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("Validate = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			for _, a := range got.Artifacts {
				if a.State != ArtifactPending || a.SHA256 != strings.ToLower(a.SHA256) {
					t.Errorf("artifact %s: state %q, digest %q; want pending, lower case", a.Name, a.State, a.SHA256)
				}
			}
		})
	}
	in := valid()
	if _, err := in.Validate(); err != nil || in.Artifacts[0].SHA256 != strings.Repeat("AB", 32) || in.Artifacts[0].State != "" {
		t.Errorf("Validate changed its receiver's artifacts: %+v", in.Artifacts[0])
	}
}

func TestValidateRecordAndEvent(t *testing.T) {
	tests := []struct {
		name string
		give error
		ok   bool
	}{
		{"record", ApplyRecord{ObjectID: "A", RackID: "r"}.Validate(), true},
		{"record without object", ApplyRecord{RackID: "r"}.Validate(), false},
		{"record without rack", ApplyRecord{ObjectID: "A"}.Validate(), false},
		{"event", Event{Kind: "JobCreated"}.Validate(), true},
		{"event without kind", Event{Data: []byte("x")}.Validate(), false},
	}
	for _, tt := range tests {
		if (tt.give == nil) != tt.ok || (!tt.ok && !errors.Is(tt.give, ErrInvalid)) {
			t.Errorf("%s: Validate = %v", tt.name, tt.give)
		}
	}
}
