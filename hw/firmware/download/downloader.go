package download

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// Downloader fetches artifacts. It is safe for concurrent use; its
// transfers share one HTTP client, one bound on concurrency and one bound
// per host (see slots).
type Downloader struct {
	opts   Options
	client *http.Client
	slots  *slots // the transfers running and waiting, per object and host
	log    zerolog.Logger
	tag    string // MemberTag(opts.Member), in temporary file names
	// received counts the bytes read from sources, verified or not.
	received atomic.Int64
}

// New returns a Downloader.
func New(o Options) *Downloader {
	o = o.withDefaults()
	return &Downloader{opts: o, client: newClient(o), slots: newSlots(o.Concurrency, o.MaxPerHost), log: o.Logger,
		tag: MemberTag(o.Member)}
}

// BytesReceived returns the bytes read from artifact sources since New,
// over every transfer, including those that later failed verification.
func (d *Downloader) BytesReceived() int64 { return d.received.Load() }

// Close releases idle connections. Downloads still running are unaffected;
// cancel their contexts to stop them.
func (d *Downloader) Close() { d.client.CloseIdleConnections() }

// Result is the outcome of one artifact.
type Result struct {
	// Name is the artifact's cache file name.
	Name string
	// Path is the cached file, set on success.
	Path string
	// Size is its size in bytes.
	Size int64
	// Reused is true when the file was already cached with the right digest.
	Reused bool
	// Err is the failure, an *ArtifactError; nil on success.
	Err error
}

// Download fetches every artifact into dir (created if missing), at most
// Options.Concurrency at a time across the Downloader and
// Options.MaxPerHost from one host, and returns when all
// have succeeded or failed: one Result per artifact, in order, and an
// *Error when any failed. A failure does not stop the others, so a retry
// finds them cached. Cancelling ctx stops every transfer and removes its
// temporary file.
//
// dir must be trusted (e.g. firmware_dir joined with an object id through
// confine.Path); artifact names are confined to it. dir is also the object
// whose turn the artifacts take for a slot: the artifacts of one dir are
// one object's, whichever call fetches them. token goes only to
// artifactory and jfrog sources, in X-JFrog-Art-Api; the zero Secret sends
// none.
func (d *Downloader) Download(ctx context.Context, dir string, artifacts []manifest.Artifact, token hw.Secret) ([]Result, error) {
	root, err := openCache(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	results := make([]Result, len(artifacts))
	var wg sync.WaitGroup
	for i, a := range artifacts {
		wg.Go(func() { results[i] = d.fetch(ctx, root, dir, a, token) })
	}
	wg.Wait()
	var failed []*ArtifactError
	for _, r := range results {
		if r.Err != nil {
			failed = append(failed, r.Err.(*ArtifactError))
		}
	}
	if len(failed) > 0 {
		return results, &Error{Failed: failed, Total: len(artifacts)}
	}
	return results, nil
}

// Fetch fetches one artifact into dir, as Download does for each of its
// artifacts: for a caller that runs (and records) artifacts one by one.
// An unusable cache directory is the artifact's failure too.
func (d *Downloader) Fetch(ctx context.Context, dir string, a manifest.Artifact, token hw.Secret) (Result, error) {
	root, err := openCache(dir)
	if err != nil {
		return Result{Name: a.Name}, err
	}
	defer root.Close()
	r := d.fetch(ctx, root, dir, a, token)
	return r, r.Err
}

// openCache creates dir when missing and opens it as the root every
// cached file is confined to.
func openCache(dir string) (*os.Root, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("download: cache directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("download: cache directory: %w", err)
	}
	return root, nil
}
