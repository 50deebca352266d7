package nvossim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rmsd/rmsd/hw/sim/simssh"
)

// runCommand interprets the small shell subset RMS sends to an NVOS host:
// commands joined by "&&", words quoted with ' or ". It returns the exit
// status of the last command run.
func (s *Switch) runCommand(line string, stdout, stderr io.Writer) int {
	words, err := simssh.SplitWords(line)
	if err != nil {
		fmt.Fprintf(stderr, "sh: syntax error: %v\n", err)
		return 2
	}
	var cmd []string
	code := 0
	for i := 0; i <= len(words); i++ {
		if i < len(words) && words[i] != "&&" {
			cmd = append(cmd, words[i])
			continue
		}
		if len(cmd) == 0 {
			fmt.Fprintln(stderr, "sh: syntax error near &&")
			return 2
		}
		if code = s.runOne(cmd, stdout, stderr); code != 0 {
			return code
		}
		cmd = nil
	}
	return code
}

// runOne runs one simple command against the switch state.
func (s *Switch) runOne(args []string, stdout, stderr io.Writer) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, format+"\n", a...)
		return code
	}
	fsErr := func(op, p string, err error) int {
		msg := "No such file or directory"
		if errors.Is(err, os.ErrPermission) {
			msg = "Permission denied"
		} else if errors.Is(err, os.ErrExist) {
			msg = "File exists"
		}
		return fail(1, "%s: cannot %s '%s': %s", args[0], op, p, msg)
	}
	switch args[0] {
	case "true":
		return 0
	case "false":
		return 1
	case "echo":
		fmt.Fprintln(stdout, strings.Join(args[1:], " "))
		return 0
	case "test", "[":
		if len(args) < 3 {
			return 1
		}
		p := cleanPath(args[2])
		switch args[1] {
		case "-f":
			return boolCode(s.fs.isFile(p))
		case "-d":
			return boolCode(s.fs.isDir(p))
		case "-e":
			return boolCode(s.fs.isFile(p) || s.fs.isDir(p))
		}
		return fail(2, "test: unsupported operator %s", args[1])
	case "mkdir", "install":
		mode, dirs, ok := parseMkdir(args)
		if !ok {
			return fail(1, "%s: unsupported arguments", args[0])
		}
		for _, d := range dirs {
			if err := s.fs.mkdirAll(cleanPath(d), mode); err != nil {
				return fsErr("create directory", d, err)
			}
		}
		return 0
	case "rm":
		force := false
		for _, a := range args[1:] {
			if a == "-f" || a == "-rf" {
				force = true
				continue
			}
			if err := s.fs.remove(cleanPath(a)); err != nil && !(force && errors.Is(err, os.ErrNotExist)) {
				return fsErr("remove", a, err)
			}
		}
		return 0
	case "chmod":
		if len(args) != 3 {
			return fail(1, "chmod: missing operand")
		}
		mode, err := strconv.ParseUint(args[1], 8, 32)
		if err != nil {
			return fail(1, "chmod: invalid mode: '%s'", args[1])
		}
		f, ok := s.fs.files[cleanPath(args[2])]
		if !ok {
			return fsErr("access", args[2], os.ErrNotExist)
		}
		f.mode = os.FileMode(mode)
		return 0
	case "cat":
		for _, a := range args[1:] {
			f, ok := s.fs.files[cleanPath(a)]
			if !ok {
				return fsErr("open", a, os.ErrNotExist)
			}
			_, _ = stdout.Write(f.data)
		}
		return 0
	case "ls":
		for _, a := range args[1:] {
			for _, fi := range s.fs.list(cleanPath(a)) {
				fmt.Fprintln(stdout, fi.Name())
			}
		}
		return 0
	case "nv":
		return s.runNV(args[1:], stdout, stderr)
	case "exit":
		if len(args) > 1 {
			if n, err := strconv.Atoi(args[1]); err == nil {
				return n
			}
		}
		return 0
	}
	return fail(127, "sh: 1: %s: not found", args[0])
}

func boolCode(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

// parseMkdir accepts "mkdir [-p] DIR..." and "install -d [-m MODE] DIR...".
func parseMkdir(args []string) (os.FileMode, []string, bool) {
	mode := os.FileMode(0o755)
	var dirs []string
	sawD := args[0] == "mkdir"
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-p":
		case "-d":
			sawD = true
		case "-m":
			if i+1 >= len(args) {
				return 0, nil, false
			}
			m, err := strconv.ParseUint(args[i+1], 8, 32)
			if err != nil {
				return 0, nil, false
			}
			mode = os.FileMode(m)
			i++
		default:
			dirs = append(dirs, args[i])
		}
	}
	return mode, dirs, sawD && len(dirs) > 0
}

// runNV accepts the NVOS CLI commands RMS issues; configuration commands
// are acknowledged, "nv show system image" reports the real partitions.
func (s *Switch) runNV(args []string, stdout, stderr io.Writer) int {
	if code, ok := s.runFabricCommand(args, stdout, stderr); ok {
		return code
	}
	if code, ok := s.runTLSCommand(args, stdout, stderr); ok {
		return code
	}
	line := strings.Join(args, " ")
	switch {
	case line == "config apply --assume-yes" || line == "config apply -y":
		fmt.Fprintln(stdout, "applied")
		return 0
	case line == "config save":
		s.saves++
		fmt.Fprintln(stdout, "saved")
		return 0
	case strings.HasPrefix(line, "show system image"):
		b, _ := json.Marshal(map[string]any{"current": partitionName(s.current), "next": partitionName(s.next),
			"partition1": map[string]any{"build-id": s.partitions[0]}, "partition2": map[string]any{"build-id": s.partitions[1]}})
		fmt.Fprintln(stdout, string(b))
		return 0
	case len(args) > 0 && (args[0] == "set" || args[0] == "unset" || args[0] == "action"):
		return 0
	}
	fmt.Fprintf(stderr, "Error: unsupported nv command: %s\n", line)
	return 1
}
