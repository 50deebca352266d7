package sim

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadFirmwareNamesTheVersionAndCountsEveryByte(t *testing.T) {
	for _, c := range []struct {
		name, file string
		body       []byte
		want       string
	}{
		{"header", "anything.bin", FirmwarePackage("1.2.3", 1<<20), "1.2.3"},
		{"file name", "bmc-4.5.6.fwpkg", []byte("no header here"), "bmc-4.5.6"},
		{"content hash", "", []byte("no header here"), "sha256-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, n, err := readFirmware(bytes.NewReader(c.body), c.file)
			if err != nil || n != int64(len(c.body)) || !strings.HasPrefix(v, c.want) {
				t.Fatalf("readFirmware = %q, %d, %v; want %q…, %d bytes", v, n, err, c.want, len(c.body))
			}
		})
	}
}
