package sshsftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pkg/sftp"
)

// sftpSession opens the sftp subsystem as one guarded step.
func (c *Client) sftpSession(ctx context.Context) (*sftp.Client, error) {
	var sc *sftp.Client
	err := c.guard(ctx, c.opts.StepTimeout, func() error {
		var err error
		sc, err = sftp.NewClient(c.conn)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open sftp on %s: %w", c.host, sftpErr(err))
	}
	return sc, nil
}

// sftpErr wraps remote file-system errors with ErrSFTP, keeping the
// package's own sentinels and os.ErrNotExist/os.ErrPermission matchable.
func sftpErr(err error) error {
	for _, own := range []error{ErrTimeout, ErrClosed, ErrConnect} {
		if errors.Is(err, own) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrSFTP, err)
}

// Upload copies r to remotePath over SFTP (create, truncate, write in
// ChunkSize pieces, close) and checks the remote size afterwards. size is
// the expected byte count, or -1 if unknown. The whole transfer is bounded
// by UploadTimeout and each step by StepTimeout: a stalled transfer fails
// with ErrStalled within one step timeout, and closes the client.
func (c *Client) Upload(ctx context.Context, r io.Reader, remotePath string, size int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.UploadTimeout)
	defer cancel()
	start := time.Now()
	sc, err := c.sftpSession(ctx)
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", remotePath, err)
	}
	defer sc.Close()
	fail := func(what string, err error) (int64, error) {
		return 0, fmt.Errorf("upload %s to %s: %s: %w", remotePath, c.host, what, sftpErr(err))
	}
	var f *sftp.File
	if err := c.guard(ctx, c.opts.StepTimeout, func() error {
		var err error
		f, err = sc.OpenFile(remotePath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		return err
	}); err != nil {
		return fail("open", err)
	}
	buf := make([]byte, c.opts.ChunkSize)
	var written int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			chunk := buf[:n]
			if err := c.guard(ctx, c.opts.StepTimeout, func() error {
				_, err := f.Write(chunk)
				return err
			}); err != nil {
				_ = f.Close()
				return fail(fmt.Sprintf("write at offset %d", written), err)
			}
			written += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			_ = f.Close()
			return 0, fmt.Errorf("upload %s: read local data: %w", remotePath, rerr)
		}
	}
	if err := c.guard(ctx, c.opts.StepTimeout, f.Close); err != nil {
		return fail("close", err)
	}
	var fi os.FileInfo
	if err := c.guard(ctx, c.opts.StepTimeout, func() error {
		var err error
		fi, err = sc.Stat(remotePath)
		return err
	}); err != nil {
		return fail("stat", err)
	}
	if fi.Size() != written || (size >= 0 && written != size) {
		return 0, fmt.Errorf("upload %s to %s: %w: remote size %d, sent %d, expected %d", remotePath, c.host, ErrSFTP, fi.Size(), written, size)
	}
	c.log.Info().Str("host", c.host).Str("path", remotePath).Int64("bytes", written).Dur("took_ms", time.Since(start)).Msg("sftp upload done")
	return written, nil
}

// UploadFile uploads the local file at localPath to remotePath.
func (c *Client) UploadFile(ctx context.Context, localPath, remotePath string) (int64, error) {
	f, err := os.Open(localPath)
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", localPath, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", localPath, err)
	}
	return c.Upload(ctx, f, remotePath, fi.Size())
}

// RemoteSize returns the size of remotePath; a missing file gives an error
// matching os.ErrNotExist (RMS's "not staged yet").
func (c *Client) RemoteSize(ctx context.Context, remotePath string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StepTimeout)
	defer cancel()
	sc, err := c.sftpSession(ctx)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	var fi os.FileInfo
	if err := c.guard(ctx, 0, func() error {
		var err error
		fi, err = sc.Stat(remotePath)
		return err
	}); err != nil {
		return 0, fmt.Errorf("stat %s on %s: %w", remotePath, c.host, sftpErr(err))
	}
	return fi.Size(), nil
}
