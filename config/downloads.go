package config

import "fmt"

// DownloadSlots is how many firmware artifact downloads rmsd runs at once;
// max_downloads_per_host is at most this.
const DownloadSlots = 4

// downloadProblems validates the [workflows] keys that pace firmware
// artifact downloads.
func (w Workflows) downloadProblems() []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if w.MaxDownloadsPerHost <= 0 || w.MaxDownloadsPerHost > DownloadSlots {
		add("workflows.max_downloads_per_host: must be between 1 and %d (the downloads run at once)", DownloadSlots)
	}
	if w.MinDownloadBytesPerSecond < 0 {
		add("workflows.min_download_bytes_per_second: must be 0 (off) or greater")
	}
	if w.DownloadRateWindowSeconds <= 0 {
		add("workflows.download_rate_window_seconds: must be greater than 0")
	}
	return p
}
