package hostsim

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/rmsd/rmsd/hw/sim/simssh"
)

// run interprets one command line (commands joined by &&, an optional
// sudo -S in front of each) and returns the exit status of the last one
// run.
func (h *Host) run(line string, stdin *bufio.Reader, stdout, stderr io.Writer) int {
	h.mu.Lock()
	h.commands = append(h.commands, line)
	h.mu.Unlock()
	words, err := simssh.SplitWords(line)
	if err != nil {
		fmt.Fprintf(stderr, "bash: syntax error: %v\n", err)
		return 2
	}
	var cmd []string
	for i := 0; i <= len(words); i++ {
		if i < len(words) && words[i] != "&&" {
			cmd = append(cmd, words[i])
			continue
		}
		if code := h.runOne(cmd, stdin, stdout, stderr); code != 0 {
			return code
		}
		cmd = nil
	}
	return 0
}

// runOne runs one command. root is a login as root or a command run
// through sudo with the right password on stdin.
func (h *Host) runOne(cmd []string, stdin *bufio.Reader, stdout, stderr io.Writer) int {
	if len(cmd) == 0 {
		fmt.Fprintln(stderr, "bash: syntax error near unexpected token `&&'")
		return 2
	}
	root := h.cfg.Credentials.Username == "root"
	if cmd[0] == "sudo" {
		rest, code := h.sudo(cmd[1:], stdin, stderr)
		if code != 0 {
			return code
		}
		cmd, root = rest, true
	}
	switch cmd[0] {
	case "command":
		return h.commandV(cmd, stdout)
	case "mst":
		return h.mst(cmd, root, stdout, stderr)
	case "flint":
		return h.flint(cmd, root, stdout, stderr)
	case "mktemp":
		return h.mktemp(cmd, stdout, stderr)
	case "rm":
		return h.rm(cmd, stderr)
	case "systemctl":
		if len(cmd) == 2 && cmd[1] == "is-system-running" {
			fmt.Fprintln(stdout, "running")
			return 0
		}
	}
	fmt.Fprintf(stderr, "bash: %s: command not found\n", cmd[0])
	return 127
}

// sudo checks sudo -S's password (read from stdin) and returns the command.
func (h *Host) sudo(args []string, stdin *bufio.Reader, stderr io.Writer) ([]string, int) {
	fromStdin := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-S":
			fromStdin = true
		case "-p":
			if len(args) < 2 {
				fmt.Fprintln(stderr, "sudo: option requires an argument -- 'p'")
				return nil, 1
			}
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: sudo -S [-p prompt] command")
		return nil, 1
	}
	if h.cfg.Credentials.Username == "root" {
		return args, 0
	}
	if !fromStdin {
		fmt.Fprintln(stderr, "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper")
		fmt.Fprintln(stderr, "sudo: a password is required")
		return nil, 1
	}
	if h.cfg.NoSudo {
		fmt.Fprintf(stderr, "%s is not in the sudoers file.  This incident will be reported.\n", h.cfg.Credentials.Username)
		return nil, 1
	}
	pw, err := stdin.ReadString('\n')
	if (err != nil && pw == "") || strings.TrimRight(pw, "\r\n") != h.cfg.Credentials.Password.Reveal() {
		fmt.Fprintln(stderr, "Sorry, try again.")
		fmt.Fprintln(stderr, "sudo: 1 incorrect password attempt")
		return nil, 1
	}
	return args, 0
}

func (h *Host) commandV(cmd []string, stdout io.Writer) int {
	if len(cmd) != 3 || cmd[1] != "-v" {
		return 2
	}
	switch cmd[2] {
	case "mst", "flint", "mktemp", "rm", "systemctl", "sudo":
		fmt.Fprintf(stdout, "/usr/bin/%s\n", cmd[2])
		return 0
	}
	return 1
}

func (h *Host) mktemp(cmd []string, stdout, stderr io.Writer) int {
	if len(cmd) != 3 || cmd[1] != "-d" || !strings.HasSuffix(cmd[2], "XXXXXX") || !strings.HasPrefix(cmd[2], "/tmp/") {
		fmt.Fprintln(stderr, "mktemp: invalid template")
		return 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextTemp++
	dir := strings.TrimSuffix(cmd[2], "XXXXXX") + fmt.Sprintf("a%05d", h.nextTemp)
	h.dirs[dir] = true
	fmt.Fprintln(stdout, dir)
	return 0
}

func (h *Host) rm(cmd []string, stderr io.Writer) int {
	var targets []string
	for _, a := range cmd[1:] {
		if !strings.HasPrefix(a, "-") {
			targets = append(targets, path.Clean(a))
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range targets {
		if t == "/" || t == "/tmp" {
			fmt.Fprintf(stderr, "rm: refusing to remove '%s'\n", t)
			return 1
		}
		delete(h.dirs, t)
		delete(h.files, t)
		for p := range h.files {
			if strings.HasPrefix(p, t+"/") {
				delete(h.files, p)
			}
		}
	}
	return 0
}
