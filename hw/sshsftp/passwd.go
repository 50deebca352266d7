package sshsftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/rmsd/rmsd/hw"
)

// ErrPasswordChange: the forced password change was refused.
var ErrPasswordChange = errors.New("sshsftp: password change rejected")

// ChangeExpiredPassword answers the forced password change a switch shows
// on a PTY shell when the login's password has expired (after an NVOS
// install or a factory reset): it types newPassword at the "New password:"
// and "Retype new password:" prompts and waits for the verdict, within
// PasswordChangeTimeout. It never answers a "Current password:" prompt.
func (c *Client) ChangeExpiredPassword(ctx context.Context, newPassword hw.Secret) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.PasswordChangeTimeout)
	defer cancel()
	err := c.guard(ctx, 0, func() error { return c.passwordDialogue(newPassword) })
	if err != nil {
		return fmt.Errorf("change expired password of %s on %s: %w", c.user, c.host, err)
	}
	c.log.Info().Str("host", c.host).Str("user", c.user).Msg("expired password changed")
	return nil
}

func (c *Client) passwordDialogue(pw hw.Secret) error {
	sess, err := c.conn.NewSession()
	if err != nil {
		return fmt.Errorf("%w: open session: %v", ErrConnect, err)
	}
	defer sess.Close()
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{ssh.ECHO: 0}); err != nil {
		return fmt.Errorf("%w: request pty: %v", ErrConnect, err)
	}
	in, err := sess.StdinPipe()
	if err != nil {
		return fmt.Errorf("%w: stdin: %v", ErrConnect, err)
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: stdout: %v", ErrConnect, err)
	}
	if err := sess.Shell(); err != nil {
		return fmt.Errorf("%w: start shell: %v", ErrConnect, err)
	}
	// Prompts and verdicts of the NVOS forced password change (lower case).
	newPrompts := []string{"new password:"}
	retypePrompts := []string{"retype new password:", "re-enter new password:", "retype password:"}
	successPhrases := []string{"password updated successfully", "passwd updated successfully", "password changed"}
	failurePhrases := []string{"authentication token manipulation error", "bad password", "password unchanged", "failure setting password"}
	var seen strings.Builder
	answered := 0
	buf := make([]byte, 1024)
	for {
		n, rerr := out.Read(buf)
		seen.Write(buf[:n])
		text := strings.ToLower(seen.String())
		if containsAny(text, failurePhrases) {
			return fmt.Errorf("%w: %s", ErrPasswordChange, lastLine(seen.String()))
		}
		if containsAny(text, successPhrases) {
			return nil
		}
		prompts := newPrompts
		if answered == 1 {
			prompts = retypePrompts
		}
		if answered < 2 && containsAny(text, prompts) {
			if _, err := io.WriteString(in, pw.Reveal()+"\r"); err != nil {
				return fmt.Errorf("%w: send password: %v", ErrConnect, err)
			}
			answered++
			seen.Reset()
			continue
		}
		if rerr != nil {
			if answered == 2 && errors.Is(rerr, io.EOF) {
				return nil
			}
			return fmt.Errorf("%w: shell ended before the password was changed: %v", ErrPasswordChange, rerr)
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' })
	if len(lines) == 0 {
		return ""
	}
	return strings.TrimSpace(lines[len(lines)-1])
}
