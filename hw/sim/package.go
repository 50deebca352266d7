package sim

// FirmwarePackage returns a firmware file that a simulated BMC or power
// shelf reports as version once flashed: FirmwareMagic, the version, a
// newline, then filler up to size bytes (never less than the header). The
// version must not contain white space.
//
// NVOS hosts (hw/sim/nvossim) read the version from the file name instead,
// its first dotted number ("nvos-amd64-25.02.2553.bin" → "25.02.2553"), so
// a package meant for a switch component or an NVOS image should also be
// published under a name that carries a dotted version.
func FirmwarePackage(version string, size int) []byte {
	header := FirmwareMagic + version + "\n"
	if size < len(header) {
		size = len(header)
	}
	b := make([]byte, size)
	n := copy(b, header)
	for i := n; i < size; i++ {
		b[i] = 'a' + byte(i%26)
	}
	return b
}
