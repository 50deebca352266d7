package nvssvt

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fragment returns a piece of secret at least 4 bytes long that s holds,
// or "".
func fragment(s, secret string) string {
	for i := 0; i+4 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+4]) {
			return secret[i : i+4]
		}
	}
	return ""
}

// feed writes s to c in chunks of n bytes.
func feed(c *capture, s string, n int) {
	for len(s) > 0 {
		k := min(n, len(s))
		_, _ = c.Write([]byte(s[:k]))
		s = s[k:]
	}
}

// A secret that the cap or the tail's start cuts leaves no piece behind,
// however the writes split it; one that is whole is redacted.
func TestCaptureLeavesNoPieceOfASecretItCuts(t *testing.T) {
	const pw, max = "s3cret-Pa55", 256
	for _, chunk := range []int{1, 3, 5, 1 << 20} {
		for in := 0; in <= len(pw); in++ { // bytes of the secret before the cut
			name := "chunk" + strconv.Itoa(chunk) + "/" + strconv.Itoa(in)
			path := filepath.Join(t.TempDir(), "out.log")
			c, err := newCapture(path, max, []string{pw})
			if err != nil {
				t.Fatal(err)
			}
			out := strings.Repeat("x", max-in) + pw + strings.Repeat("y", 2*tailBytes)
			feed(c, out, chunk)
			c.close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if f := fragment(string(b), pw); f != "" {
				t.Errorf("%s: the log holds %q of the secret: %q", name, f, b)
			}
			// Only the piece of the secret goes, and the note counts it.
			kept := strings.Repeat("x", max-in)
			if in == len(pw) {
				kept += "[REDACTED]"
			}
			if want := kept + "\n[rmsd: " + strconv.Itoa(len(out)-max+in%len(pw)) + " more bytes dropped"; !strings.HasPrefix(string(b), want) {
				t.Errorf("%s: log %q, want it to start %q", name, b, want)
			}

			c, err = newCapture(filepath.Join(t.TempDir(), "err.log"), 1<<20, []string{pw})
			if err != nil {
				t.Fatal(err)
			}
			feed(c, strings.Repeat("z", 2*tailBytes)+pw+strings.Repeat("y", tailBytes-(len(pw)-in)), chunk)
			tail := c.tailText()
			if f := fragment(tail, pw); f != "" {
				t.Errorf("%s: the tail holds %q of the secret: %q", name, f, tail)
			}
			want := strings.Repeat("y", tailBytes-(len(pw)-in))
			if in == 0 {
				want = "[REDACTED]" + want
			}
			if tail != want {
				t.Errorf("%s: tail %q, want %q", name, tail, want)
			}
			c.close()
		}
	}
}
