package nvossim

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rmsd/rmsd/hw/sim/simssh"
)

// ONIEVersion is what the simulated ONIE reports (onie-sysinfo -v).
const ONIEVersion = "2024.08-5.3.0014-115200"

// maxONIEUpload bounds a file written through `cat >` in ONIE: the
// simulator keeps files in memory.
const maxONIEUpload = 256 << 20

// BootONIE puts the switch in the state of a tray without NVOS: it boots
// its ONIE install environment, in which NVUE does not answer and SSH
// takes only the ONIE login (Config.ONIEUsername/ONIEPassword) with a few
// commands: onie-sysinfo -v, cat > FILE, wc -c < FILE and
// onie-nos-install FILE. Installing an NVOS image there leaves ONIE and
// reboots into it, with both partitions' build reset and the factory
// admin login (admin/admin, expired).
func (s *Switch) BootONIE() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onie = true
	s.partitions = [2]string{"", ""}
	s.log.Info().Msg("switch boots ONIE: no NVOS installed")
}

// InONIE reports whether the switch runs ONIE (no NVOS installed).
func (s *Switch) InONIE() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onie
}

// checkONIELoginLocked checks an SSH login while the switch runs ONIE.
func (s *Switch) checkONIELoginLocked(name, password string) authResult {
	if name == s.cfg.ONIEUsername && password == s.cfg.ONIEPassword.Reveal() {
		return authOK
	}
	return authFailed
}

// runONIE runs one command line of the ONIE shell; stdin is the session's
// input (for cat > FILE).
func (s *Switch) runONIE(line string, stdin io.Reader, stdout, stderr io.Writer) int {
	words, err := simssh.SplitWords(line)
	if err != nil || len(words) == 0 {
		fmt.Fprintln(stderr, "sh: syntax error")
		return 2
	}
	switch {
	case len(words) == 2 && words[0] == "onie-sysinfo" && words[1] == "-v":
		fmt.Fprintln(stdout, ONIEVersion)
		return 0
	case len(words) == 3 && words[0] == "cat" && words[1] == ">":
		return s.onieWrite(words[2], stdin, stderr)
	case len(words) == 4 && words[0] == "wc" && words[1] == "-c" && words[2] == "<":
		s.mu.Lock()
		f, ok := s.fs.files[cleanPath(words[3])]
		size := 0
		if ok {
			size = len(f.data)
		}
		s.mu.Unlock()
		if !ok {
			fmt.Fprintf(stderr, "sh: can't open '%s': No such file or directory\n", words[3])
			return 1
		}
		fmt.Fprintln(stdout, strconv.Itoa(size))
		return 0
	case len(words) == 2 && words[0] == "onie-nos-install":
		return s.onieInstall(words[1], stdout, stderr)
	}
	fmt.Fprintf(stderr, "sh: %s: not found\n", words[0])
	return 127
}

// onieWrite stores stdin as path (under /tmp only, as ONIE's RAM disk).
func (s *Switch) onieWrite(path string, stdin io.Reader, stderr io.Writer) int {
	if !strings.HasPrefix(path, "/tmp/") || strings.Contains(path, "..") {
		fmt.Fprintf(stderr, "sh: can't create %s: Read-only file system\n", path)
		return 1
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(stdin, maxONIEUpload+1))
	if err != nil {
		fmt.Fprintf(stderr, "cat: read error: %v\n", err)
		return 1
	}
	if n > maxONIEUpload {
		fmt.Fprintf(stderr, "cat: write error: No space left on device\n")
		return 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.fs.create(cleanPath(path), 0o644, s.now())
	if err != nil {
		fmt.Fprintf(stderr, "sh: can't create %s: %v\n", path, err)
		return 1
	}
	f.data = buf.Bytes()
	return 0
}

// onieInstall runs the NOS installer on a local file: an NVOS image (its
// name holds the build) is installed to partition 1, the switch leaves
// ONIE and reboots into it once the command has returned.
func (s *Switch) onieInstall(path string, stdout, stderr io.Writer) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.fs.files[cleanPath(path)]
	if !ok {
		fmt.Fprintf(stderr, "ERROR: Unable to find installer image %s\n", path)
		return 1
	}
	name := path[strings.LastIndex(path, "/")+1:]
	version := versionPattern.FindString(name)
	if !strings.HasPrefix(name, "nvos-") || version == "" || len(f.data) == 0 || s.imageFaults.installFailure != "" {
		msg := "not an ONIE installer for this platform"
		if s.imageFaults.installFailure != "" {
			msg = s.imageFaults.installFailure
		}
		fmt.Fprintf(stderr, "ERROR: %s: %s\n", name, msg)
		return 1
	}
	build := "nvos-" + version
	fmt.Fprintf(stdout, "ONIE: Executing installer: %s\nInstalling %s on partition 1\nInstallation finished. Rebooting...\n", path, build)
	now := s.now()
	s.rebootLocked(now.Add(s.cfg.scale(s.cfg.RebootDelay)), func() {
		s.onie = false
		s.partitions = [2]string{build, ""}
		s.current, s.next = 1, 1
		s.users = map[string]*user{"admin": {password: "admin", expired: true}}
		s.fs.removeTree("/tmp")
	})
	s.log.Info().Str("build", build).Msg("NVOS installed from ONIE; rebooting")
	return 0
}
