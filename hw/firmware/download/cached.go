package download

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotCached: the cache directory holds no regular file of that name.
var ErrNotCached = errors.New("download: not in the cache")

// Verify checks, without fetching anything, that dir already holds the
// artifact name with the digest sha (hex, any case): the check Download
// makes before a transfer, for a caller that cannot fetch, such as a
// restart re-verifying a download it was interrupted in (the access token
// is gone). It returns the file's Result, or an error matching
// ErrNotCached, ErrChecksum (a *ChecksumError), ErrNoChecksum, a confine
// refusal of the name, or the end of ctx, which stops the hashing of a
// large file.
func Verify(ctx context.Context, dir, name, sha string) (Result, error) {
	res := Result{Name: name}
	if !sha256Pattern.MatchString(sha) {
		return res, ErrNoChecksum
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("%w: no directory %s", ErrNotCached, dir)
	}
	if err != nil {
		return res, fmt.Errorf("download: cache directory: %w", err)
	}
	defer root.Close()
	if err := checkName(dir, name); err != nil {
		return res, err
	}
	n, err := verifyCached(ctx, root, name, strings.ToLower(sha))
	if err != nil {
		return res, err
	}
	res.Path, res.Size, res.Reused = filepath.Join(dir, name), n, true
	return res, nil
}

// verifyCached checks that root holds the regular file name with the digest
// want (lower-case hex) and returns its size. Download checks the cache with
// it before a transfer, Verify instead of one. Its errors match
// ErrNotCached, ErrChecksum or the end of ctx, which stops the hashing.
func verifyCached(ctx context.Context, root *os.Root, name, want string) (int64, error) {
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: %s", ErrNotCached, name)
	}
	if err != nil {
		return 0, fmt.Errorf("open cached %s: %w", name, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%w: %s is not a regular file", ErrNotCached, name)
	}
	h := sha256.New()
	n, err := io.Copy(h, &ctxReader{ctx: ctx, r: f})
	if ctx.Err() != nil {
		return 0, interrupted(context.Cause(ctx))
	}
	if err != nil {
		return 0, fmt.Errorf("read cached %s: %w", name, err)
	}
	if err := verify(h, want); err != nil {
		return 0, err
	}
	return n, nil
}
