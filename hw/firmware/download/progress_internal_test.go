package download

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestProgress_LogsEveryTenPercent(t *testing.T) {
	tests := []struct {
		name   string
		total  int64
		writes []int
		want   string // logged percentages
	}{
		{"small writes", 1000, repeat(50, 20), "10 20 30 40 50 60 70 80 90 100"},
		{"one write crossing three steps", 1000, []int{95, 250, 655}, "30 100"},
		{"one write for everything", 1000, []int{1000}, "100"},
		{"below the first step", 1000, []int{99}, ""},
		{"uneven total", 3, []int{1, 1, 1}, "30 60 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &progress{log: zerolog.New(&buf), total: tt.total, start: time.Now()}
			for _, n := range tt.writes {
				if _, err := p.Write(make([]byte, n)); err != nil {
					t.Fatal(err)
				}
			}
			if got := field(buf.String(), `"percent":`); got != tt.want {
				t.Errorf("logged %q, want %q\n%s", got, tt.want, buf.String())
			}
			if tt.want != "" && !strings.Contains(buf.String(), `"elapsed_ms":`) {
				t.Errorf("no elapsed_ms in %s", buf.String())
			}
		})
	}
}

func TestProgress_UnknownSizeLogsEvery256MiB(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{log: zerolog.New(&buf), total: -1, start: time.Now()}
	chunk := make([]byte, 1<<20)
	for range 600 {
		if _, err := p.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if got := field(buf.String(), `"downloaded_bytes":`); got != "268435456 536870912" {
		t.Errorf("logged %q", got)
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

// field lists the values of a numeric JSON field over log lines.
func field(logs, key string) string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if i := strings.Index(line, key); i >= 0 {
			v := line[i+len(key):]
			if j := strings.IndexAny(v, ",}"); j >= 0 {
				v = v[:j]
			}
			out = append(out, v)
		}
	}
	return strings.Join(out, " ")
}
