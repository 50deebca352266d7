package rmsserver

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of the text a reply carries, whatever the caller sent: a batch
// message stays within a few KiB however many nodes failed and however
// long their errors are.
const (
	// maxNodeError bounds one node's error_message.
	maxNodeError = 1024
	// maxSummaryEntry bounds one failure in a batch message.
	maxSummaryEntry = 300
	// maxSummaryEntries is how many failures a batch message lists before
	// it counts the rest ("and N more").
	maxSummaryEntries = 10
	// maxMessage bounds any other message built from errors.
	maxMessage = 2048
	// maxEchoed bounds a name, version or target a reply echoes from a
	// caller's manifest or a device's answer.
	maxEchoed = 256
)

// clip returns s cut to at most max bytes on a character boundary, marked
// with "…" when cut. Invalid UTF-8 (which protobuf refuses to send) is
// replaced.
func clip(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// summarise joins the first maxSummaryEntries entries, each clipped, with
// sep, and counts the rest as "and N more".
func summarise(entries []string, sep string) string {
	var b strings.Builder
	for i, e := range entries {
		if i == maxSummaryEntries {
			fmt.Fprintf(&b, "%sand %d more", sep, len(entries)-i)
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(clip(e, maxSummaryEntry))
	}
	return b.String()
}
