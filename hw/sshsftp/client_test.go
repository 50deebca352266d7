package sshsftp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const password = "Ssh-Secret-Pass-31"

type rig struct {
	sw  *nvossim.Switch
	ctx context.Context
	ep  hw.Endpoint
}

func start(t *testing.T) *rig {
	t.Helper()
	sw, err := nvossim.New(nvossim.Config{Password: hw.NewSecret(password), TimeScale: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	if err := sw.Start(ctx, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sw.Close() })
	return &rig{sw: sw, ctx: ctx, ep: sw.Endpoint()}
}

func (r *rig) opts() sshsftp.Options {
	return sshsftp.Options{Port: r.sw.SSHPort(), HostKey: sshsftp.FixedHostKey(r.sw.HostKey())}
}

func (r *rig) dial(t *testing.T, opts sshsftp.Options) *sshsftp.Client {
	t.Helper()
	c, err := sshsftp.Dial(r.ctx, r.ep, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestHostKeyPolicies(t *testing.T) {
	r := start(t)
	o := r.opts()
	o.HostKey = sshsftp.HostKeyPolicy{}
	if _, err := sshsftp.Dial(r.ctx, r.ep, o); !errors.Is(err, sshsftp.ErrNoHostKeyPolicy) {
		t.Fatalf("zero policy: %v", err)
	}
	other, err := nvossim.New(nvossim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	o.HostKey = sshsftp.FixedHostKey(other.HostKey())
	if _, err := sshsftp.Dial(r.ctx, r.ep, o); !errors.Is(err, sshsftp.ErrHostKey) {
		t.Fatalf("wrong fixed key: %v", err)
	}
	o.HostKey = sshsftp.AcceptAnyHostKey()
	r.dial(t, o)

	dir := t.TempDir()
	good := filepath.Join(dir, "known_hosts")
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(r.sw.SSHPort()))
	if err := os.WriteFile(good, []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, r.sw.HostKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.HostKey = sshsftp.KnownHostsFile(good)
	r.dial(t, o)
	bad := filepath.Join(dir, "known_hosts_bad")
	if err := os.WriteFile(bad, []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, other.HostKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.HostKey = sshsftp.KnownHostsFile(bad)
	if _, err := sshsftp.Dial(r.ctx, r.ep, o); !errors.Is(err, sshsftp.ErrHostKey) {
		t.Fatalf("known_hosts mismatch: %v", err)
	}
}

func TestRunReportsExitStatusAndStderr(t *testing.T) {
	r := start(t)
	c := r.dial(t, r.opts())
	out, err := c.Output(r.ctx, "echo 'hello switch'")
	if err != nil || out != "hello switch" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	_, err = c.Run(r.ctx, "mkdir -p /etc/forbidden")
	var xe *sshsftp.ExitError
	if !errors.Is(err, sshsftp.ErrExit) || !errors.As(err, &xe) || xe.Code != 1 || !strings.Contains(xe.Stderr, "Permission denied") {
		t.Fatalf("failing command: %v", err)
	}
	_, err = c.Run(r.ctx, "frobnicate --now")
	if !errors.As(err, &xe) || xe.Code != 127 {
		t.Fatalf("unknown command: %v", err)
	}
	ok, err := c.FileExists(r.ctx, "/host/nos-images/none.bin")
	if err != nil || ok {
		t.Fatalf("missing file: %v, %v", ok, err)
	}
}

func TestLoginFailures(t *testing.T) {
	r := start(t)
	ep := r.ep
	ep.Credentials = hw.UserPass("admin", "wrong")
	if _, err := sshsftp.Dial(r.ctx, ep, r.opts()); !errors.Is(err, sshsftp.ErrAuth) {
		t.Fatalf("wrong password: %v", err)
	}
	r.sw.RejectLogins(true)
	if _, err := sshsftp.Dial(r.ctx, r.ep, r.opts()); !errors.Is(err, sshsftp.ErrAuth) {
		t.Fatalf("rejected logins: %v", err)
	}
	r.sw.RejectLogins(false)
	r.sw.Unreachable(time.Hour)
	if _, err := sshsftp.Dial(r.ctx, r.ep, r.opts()); !errors.Is(err, sshsftp.ErrConnect) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestRebootDropsSessionsAndRefusesLogins(t *testing.T) {
	r := start(t)
	c := r.dial(t, r.opts())
	r.sw.PowerCycle(time.Hour)
	if _, err := c.Run(r.ctx, "true"); !errors.Is(err, sshsftp.ErrConnect) {
		t.Fatalf("exec during reboot: %v", err)
	}
	if _, err := sshsftp.Dial(r.ctx, r.ep, r.opts()); !errors.Is(err, sshsftp.ErrConnect) {
		t.Fatalf("login during reboot: %v", err)
	}
}

func TestSilentServerTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ep := hw.Endpoint{IP: "127.0.0.1", Credentials: hw.UserPass("admin", password)}
	o := sshsftp.Options{Port: ln.Addr().(*net.TCPAddr).Port, HostKey: sshsftp.AcceptAnyHostKey(), ConnectTimeout: 150 * time.Millisecond}
	began := time.Now()
	_, err = sshsftp.Dial(context.Background(), ep, o)
	if !errors.Is(err, sshsftp.ErrTimeout) {
		t.Fatalf("silent server: %v", err)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("timeout took %v", took)
	}
}

func TestUploadAndRemoteSize(t *testing.T) {
	r := start(t)
	o := r.opts()
	o.ChunkSize = 64 << 10
	c := r.dial(t, o)
	data := bytes.Repeat([]byte{0xA5, 0x5A, 0x01}, 500_000)
	local := filepath.Join(t.TempDir(), "nvos-amd64-25.02.4000.bin")
	if err := os.WriteFile(local, data, 0o600); err != nil {
		t.Fatal(err)
	}
	remote := nvossim.NOSImageDir + "/nvos-amd64-25.02.4000.bin"
	if _, err := c.RemoteSize(r.ctx, remote); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("size before upload: %v", err)
	}
	n, err := c.UploadFile(r.ctx, local, remote)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("upload: %d, %v", n, err)
	}
	size, err := c.RemoteSize(r.ctx, remote)
	if err != nil || size != int64(len(data)) {
		t.Fatalf("remote size: %d, %v", size, err)
	}
	got, _ := r.sw.File(remote)
	if !bytes.Equal(got, data) {
		t.Fatal("remote content differs")
	}
	// Re-uploading truncates: a shorter file replaces the longer one.
	if _, err := c.Upload(r.ctx, strings.NewReader("short"), remote, 5); err != nil {
		t.Fatal(err)
	}
	if size, _ := c.RemoteSize(r.ctx, remote); size != 5 {
		t.Fatalf("after truncating upload: %d", size)
	}
}

func TestStalledUploadFailsWithinStepTimeout(t *testing.T) {
	r := start(t)
	o := r.opts()
	o.ChunkSize = 64 << 10
	o.StepTimeout = 500 * time.Millisecond
	c := r.dial(t, o)
	r.sw.StallUploads(256 << 10)
	defer r.sw.ResumeUploads()
	began := time.Now()
	_, err := c.Upload(r.ctx, bytes.NewReader(make([]byte, 1<<20)), nvossim.NOSImageDir+"/stall.bin", 1<<20)
	took := time.Since(began)
	if !errors.Is(err, sshsftp.ErrStalled) || !errors.Is(err, sshsftp.ErrTimeout) {
		t.Fatalf("stalled upload: %v", err)
	}
	if took > 3*time.Second {
		t.Fatalf("stall detected after %v, step timeout 500ms", took)
	}
	got, _ := r.sw.File(nvossim.NOSImageDir + "/stall.bin")
	if len(got) == 0 || len(got) > 256<<10 {
		t.Fatalf("stored %d bytes, want a partial file up to the stall point", len(got))
	}
	if _, err := c.Run(r.ctx, "true"); err == nil {
		t.Fatal("the client must be unusable after a stall")
	}
}

func TestUploadOverallTimeout(t *testing.T) {
	r := start(t)
	o := r.opts()
	o.StepTimeout = time.Minute
	o.UploadTimeout = 200 * time.Millisecond
	c := r.dial(t, o)
	r.sw.StallUploads(0)
	defer r.sw.ResumeUploads()
	_, err := c.Upload(r.ctx, bytes.NewReader(make([]byte, 4096)), nvossim.NOSImageDir+"/slow.bin", 4096)
	if !errors.Is(err, sshsftp.ErrTimeout) || errors.Is(err, sshsftp.ErrStalled) {
		t.Fatalf("overall timeout: %v", err)
	}
}

func TestExpiredPasswordChange(t *testing.T) {
	r := start(t)
	r.sw.ExpirePassword("admin")
	c := r.dial(t, r.opts())
	if _, err := c.Run(r.ctx, "true"); !errors.Is(err, sshsftp.ErrExit) {
		t.Fatalf("exec with expired password: %v", err)
	}
	if err := c.ChangeExpiredPassword(r.ctx, hw.NewSecret("short")); !errors.Is(err, sshsftp.ErrPasswordChange) {
		t.Fatalf("too short a password: %v", err)
	}
	if err := c.ChangeExpiredPassword(r.ctx, hw.NewSecret("Long-Enough-Pass-8")); err != nil {
		t.Fatal(err)
	}
	ep := r.ep
	ep.Credentials = hw.UserPass("admin", "Long-Enough-Pass-8")
	nc, err := sshsftp.Dial(r.ctx, ep, r.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Run(r.ctx, "true"); err != nil {
		t.Fatalf("exec after change: %v", err)
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	r := start(t)
	var logs bytes.Buffer
	o := r.opts()
	o.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	var texts []string
	c := r.dial(t, o)
	_, _ = c.Run(r.ctx, "echo hi")
	r.sw.ExpirePassword("admin")
	ec := r.dial(t, o)
	err := ec.ChangeExpiredPassword(r.ctx, hw.NewSecret("Second-Secret-99"))
	texts = append(texts, fmt.Sprint(err))
	bad := r.ep
	bad.Credentials = hw.UserPass("admin", "Third-Secret-77")
	_, err = sshsftp.Dial(r.ctx, bad, o)
	texts = append(texts, err.Error(), fmt.Sprintf("%v %+v %#v", o, r.ep, bad))
	texts = append(texts, logs.String())
	for _, txt := range texts {
		for _, secret := range []string{password, "Second-Secret-99", "Third-Secret-77"} {
			if strings.Contains(txt, secret) {
				t.Fatalf("secret %q printed in %q", secret, txt)
			}
		}
	}
	if !strings.Contains(logs.String(), "ssh exec") {
		t.Fatal("the test must exercise logging")
	}
}

// TestRunInputFeedsTheCommandsStdin: RunInput streams its reader to the
// command as standard input, here ONIE's `cat > FILE` (a shell without an
// SFTP server), and the file holds exactly those bytes.
func TestRunInputFeedsTheCommandsStdin(t *testing.T) {
	r := start(t)
	r.sw.BootONIE()
	ep := r.ep
	ep.Credentials = hw.Credentials{Username: "root"}
	c, err := sshsftp.Dial(r.ctx, ep, r.opts())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	body := bytes.Repeat([]byte("0123456789abcdef"), 40_000) // 640 KB, several SSH windows
	if _, err := c.RunInput(r.ctx, "cat > "+sshsftp.Quote("/tmp/image.bin"), bytes.NewReader(body)); err != nil {
		t.Fatalf("cat > /tmp/image.bin: %v", err)
	}
	if got, ok := r.sw.File("/tmp/image.bin"); !ok || !bytes.Equal(got, body) {
		t.Fatalf("file on the host: %d bytes (present %v), want the %d streamed", len(got), ok, len(body))
	}
	if out, err := c.Output(r.ctx, "wc -c < /tmp/image.bin"); err != nil || out != "640000" {
		t.Fatalf("wc -c: %q, %v", out, err)
	}
}
