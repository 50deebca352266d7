package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/confine"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

var sha256Pattern = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// fetch brings one artifact into root (the directory dir).
func (d *Downloader) fetch(ctx context.Context, root *os.Root, dir string, a manifest.Artifact, token hw.Secret) Result {
	res := Result{Name: a.Name}
	fail := func(err error) Result {
		res.Err = &ArtifactError{Name: a.Name, Source: a.Source.String(), Err: err}
		return res
	}
	if err := checkName(dir, a.Name); err != nil {
		return fail(err)
	}
	if !sha256Pattern.MatchString(a.Sha256) {
		return fail(ErrNoChecksum)
	}
	want := strings.ToLower(a.Sha256)
	log := d.log.With().Str("artifact", a.Name).Str("component", a.Component).Str("source", a.Source.String()).Logger()
	size, err := verifyCached(ctx, root, a.Name, want)
	switch {
	case err == nil:
		log.Info().Int64("size_bytes", size).Msg("artifact already cached and verified")
		res.Path, res.Size, res.Reused = filepath.Join(dir, a.Name), size, true
		return res
	case ctx.Err() != nil:
		return fail(err) // cancelled while checking the cache
	}
	release, err := d.slots.acquire(ctx, objectOf(dir), hostOf(a.Source), log)
	if err != nil {
		return fail(err)
	}
	defer release()
	start := time.Now()
	size, err = d.transfer(ctx, root, a, want, token, log, start)
	if err != nil {
		return fail(err)
	}
	log.Info().Int64("size_bytes", size).Dur("elapsed_ms", time.Since(start)).Msg("artifact downloaded and verified")
	res.Path, res.Size = filepath.Join(dir, a.Name), size
	return res
}

// checkName refuses a cache name that is not one file name inside dir.
func checkName(dir, name string) error {
	if _, err := confine.Path(dir, name); err != nil {
		return err
	}
	if strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("artifact name %q is not a single file name: %w", name, confine.ErrInvalidName)
	}
	return nil
}

// transfer streams the artifact into a temporary file, verifies it and
// renames it into place. The temporary file is removed on every failure.
func (d *Downloader) transfer(ctx context.Context, root *os.Root, a manifest.Artifact, want string, token hw.Secret,
	log zerolog.Logger, start time.Time) (int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	body, total, err := d.open(ctx, cancel, a, token)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	limit := d.opts.MaxArtifactBytes
	if total > limit {
		return 0, fmt.Errorf("%w: %d bytes announced, max_artifact_bytes is %d", ErrTooLarge, total, limit)
	}
	tmp := tempName(a.Name, d.tag)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("create temporary file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			_ = root.Remove(tmp) // best effort; ReapTempFiles catches leftovers
		}
	}()
	ev := log.Info()
	if total >= 0 {
		ev = ev.Int64("total_bytes", total)
	}
	ev.Msg("artifact download started")
	h := sha256.New()
	p := &progress{log: log, total: total, start: start, received: &d.received}
	n, err := io.Copy(io.MultiWriter(tempWriter{f}, h, p), io.LimitReader(&ctxReader{ctx: ctx, r: body}, limit+1))
	if err != nil {
		return n, copyError(ctx, err)
	}
	if n > limit {
		return n, fmt.Errorf("%w: more than %d bytes (max_artifact_bytes)", ErrTooLarge, limit)
	}
	if err := verify(h, want); err != nil {
		return n, err
	}
	if err := f.Sync(); err != nil {
		return n, fmt.Errorf("write temporary file: %w", err)
	}
	if err := f.Close(); err != nil {
		return n, fmt.Errorf("write temporary file: %w", err)
	}
	if err := root.Rename(tmp, a.Name); err != nil {
		return n, fmt.Errorf("rename into place: %w", err)
	}
	done = true
	return n, nil
}

// open starts reading the artifact's source; total is its size, -1 when
// unknown.
func (d *Downloader) open(ctx context.Context, cancel context.CancelCauseFunc, a manifest.Artifact, token hw.Secret) (io.ReadCloser, int64, error) {
	switch a.Source.Kind {
	case manifest.SourceHTTP, manifest.SourceArtifactory:
		return d.getHTTP(ctx, cancel, a.Source, token)
	case manifest.SourceFile:
		return d.openFile(a.Source)
	}
	return nil, 0, fmt.Errorf("%w: source kind %s", ErrUnsupportedSource, a.Source.Kind)
}

// openFile opens a file source inside Options.SourceRoot.
func (d *Downloader) openFile(src manifest.Source) (io.ReadCloser, int64, error) {
	if d.opts.SourceRoot == "" {
		return nil, 0, fmt.Errorf("%w: file sources need a firmware directory", ErrUnsupportedSource)
	}
	f, err := confine.Open(d.opts.SourceRoot, src.Path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("stat %s: %w", src.Path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", src.Path)
	}
	return f, fi.Size(), nil
}

// copyError explains an interrupted copy: the caller's cancellation, a
// stall, a write failure or the connection.
func copyError(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		return interrupted(c)
	}
	var we *writeError
	if errors.As(err, &we) {
		return we
	}
	return fmt.Errorf("%w: reading the source: %v", ErrTransport, urlReason(err))
}

func verify(h hash.Hash, want string) error {
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return &ChecksumError{Want: want, Got: got}
	}
	return nil
}

// tempWriter marks failures to write the temporary file, so they are not
// taken for the source's.
type tempWriter struct{ f *os.File }

func (w tempWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		return n, &writeError{err}
	}
	return n, nil
}

type writeError struct{ err error }

func (e *writeError) Error() string { return "write temporary file: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// ctxReader stops a copy as soon as its context ends (a local file copy
// would otherwise run to its end).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
