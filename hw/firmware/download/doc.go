// Package download fetches a firmware manifest's payload artifacts
// (manifest.Artifact) into a cache directory, for AddFirmwareObject's
// background download and ApplyFirmwareObject's ephemeral cache.
//
// Sources: http and https are streamed with a plain GET; artifactory and
// jfrog sources add X-JFrog-Art-Api with the request's access token when
// one is given (AccessToken reads NOAUTH, empty and white space as none);
// file sources are copied from a local file that must lie inside
// Options.SourceRoot (firmware_dir), checked with hw/firmware/confine.
//
// Every artifact is written to a temporary file in the cache directory
// (".<name>.part-<random>", through an os.Root so no name can escape it;
// ".<name>.part-<member tag>-<random>" for a cluster member, Options.Member),
// hashed while it streams, checked against its Sha256 (any case) and only
// then renamed to its name; a mismatch, an artifact above
// Options.MaxArtifactBytes (checked against Content-Length and again while
// streaming), a stall (no data for Options.StallTimeout), an http transfer
// below Options.MinBytesPerSecond over the last Options.RateWindow
// (ErrTooSlow, a *RateError naming the host and the rate; judged on a
// clock of its own, so a trickle of bytes does not postpone it as it
// postpones a stall) or a cancelled context removes the temporary file and fails that artifact. A file already
// in the cache with the right digest is kept, not fetched again.
// Check refuses unusable file sources before anything is fetched,
// ReapTempFiles removes the temporary files a crash of the same member (or
// single rmsd) left behind, never those of other members' downloads, and Verify
// re-checks a cached file against its digest without fetching anything (a
// restart cannot fetch again: the access token is gone).
//
// One Downloader runs at most Options.Concurrency transfers at once across
// all its callers, at most Options.MaxPerHost of them from one host (the
// URL's host and port; file sources count as one host). The objects
// whose artifacts wait for a slot take turns (an object is the cache
// directory its artifacts are fetched into): a freed slot goes to the
// object served longest ago that has an artifact on a host below its
// limit, within it to the host served longest ago, then to that host's
// earliest artifact. So neither a slow host nor an object with many
// artifacts can keep another object waiting behind its queue;
// Download waits for every artifact it was given and
// returns one Result each, with an *Error listing the failures. Progress is
// logged every 10 % per artifact. Redirects are followed only to http and
// https, and the access token is dropped when one leads to another host or
// from https to http.
//
// The access token is passed per call as an hw.Secret: the package never
// stores, logs or puts it in an error, and it reaches only the request
// header. URLs appear in logs and errors without their query.
package download
