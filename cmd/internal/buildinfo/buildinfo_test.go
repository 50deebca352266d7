package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		give debug.BuildInfo
		want string
	}{
		{"devel without vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"tagged", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"revision", debug.BuildInfo{
			Main:     debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}},
		}, "devel (rev 0123456789ab)"},
		{"modified", debug.BuildInfo{
			Main: debug.Module{Version: "v0.1.0"},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"},
			},
		}, "v0.1.0 (rev abc, modified)"},
		{"pseudo-version already names the revision", debug.BuildInfo{
			Main:     debug.Module{Version: "v0.0.0-20261130014016-ce42963ab2f2+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ce42963ab2f2aaaa"}},
		}, "v0.0.0-20261130014016-ce42963ab2f2+dirty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := format(&tt.give); got != tt.want {
				t.Fatalf("format = %q, want %q", got, tt.want)
			}
		})
	}
}
