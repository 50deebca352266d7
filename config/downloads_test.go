package config

import (
	"strings"
	"testing"
)

func TestDownloadKeys(t *testing.T) {
	cfg, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Workflows
	if w.MaxDownloadsPerHost != 2 || w.MinDownloadBytesPerSecond != 64<<10 || w.DownloadRateWindowSeconds != 60 {
		t.Errorf("defaults %+v", w)
	}
	path := writeConfig(t, `
[workflows]
max_downloads_per_host = 1
min_download_bytes_per_second = 0
`)
	cfg, err = Load(Source{Path: path, Explicit: true, Environ: []string{"RMS_WORKFLOWS__DOWNLOAD_RATE_WINDOW_SECONDS=120"}})
	if err != nil {
		t.Fatal(err)
	}
	w = cfg.Workflows
	if w.MaxDownloadsPerHost != 1 || w.MinDownloadBytesPerSecond != 0 || w.DownloadRateWindowSeconds != 120 {
		t.Errorf("loaded %+v", w)
	}
}

func TestDownloadKeysAreValidated(t *testing.T) {
	path := writeConfig(t, `
[workflows]
max_downloads_per_host = 5
min_download_bytes_per_second = -1
download_rate_window_seconds = 0
`)
	_, err := Load(Source{Path: path, Explicit: true})
	got := strings.Join(problemsOf(t, err), "\n")
	for _, want := range []string{
		"workflows.max_downloads_per_host: must be between 1 and 4",
		"workflows.min_download_bytes_per_second: must be 0 (off) or greater",
		"workflows.download_rate_window_seconds: must be greater than 0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}
