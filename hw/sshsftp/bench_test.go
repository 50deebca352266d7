package sshsftp_test

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// BenchmarkUpload compares Client.Upload (512 KiB guarded steps, size
// check) with a plain pkg/sftp Create+Write of the same 8 MiB to the same
// simulated switch, in the same run.
func BenchmarkUpload(b *testing.B) {
	sw, err := nvossim.New(nvossim.Config{TimeScale: 0.001})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := sw.Start(ctx, "127.0.0.1"); err != nil {
		b.Fatal(err)
	}
	defer sw.Close()
	ep := sw.Endpoint()
	data := bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16)

	b.Run("baseline-pkg-sftp", func(b *testing.B) {
		cfg := &ssh.ClientConfig{User: ep.Credentials.Username, Auth: []ssh.AuthMethod{ssh.Password(ep.Credentials.Password.Reveal())},
			HostKeyCallback: ssh.FixedHostKey(sw.HostKey())}
		conn, err := ssh.Dial("tcp", net.JoinHostPort(ep.IP, strconv.Itoa(sw.SSHPort())), cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		b.SetBytes(int64(len(data)))
		b.ResetTimer()
		for b.Loop() {
			sc, err := sftp.NewClient(conn)
			if err != nil {
				b.Fatal(err)
			}
			f, err := sc.Create(nvossim.NOSImageDir + "/base.bin")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			sc.Close()
		}
	})
	b.Run("sshsftp-upload", func(b *testing.B) {
		c, err := sshsftp.Dial(ctx, ep, sshsftp.Options{Port: sw.SSHPort(), HostKey: sshsftp.FixedHostKey(sw.HostKey())})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.SetBytes(int64(len(data)))
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.Upload(ctx, bytes.NewReader(data), nvossim.NOSImageDir+"/client.bin", int64(len(data))); err != nil {
				b.Fatal(err)
			}
		}
	})
}
