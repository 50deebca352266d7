// Package catalog is the firmware object catalog behind AddFirmwareObject,
// GetFirmwareObject, ListFirmwareObjects, DeleteFirmwareObject,
// SetDefaultFirmwareObject and GetFirmwareObjectHistory (rms-spec §2.5): it
// validates a firmware manifest, records the object in the store, and owns
// the background downloads that make it available.
//
// What it owns: the objects' cache directories,
// <firmware_dir>/objects/<object id>/ (the id is confined to one directory
// name with hw/firmware/confine), and one goroutine per object whose
// artifacts are being downloaded (with one per artifact below it) or
// re-verified. What it does not do: speak protobuf (the gRPC edge converts
// Object and HistoryRecord), fetch bytes itself (hw/firmware/download
// does, with its checksum, size limit, minimum rate and concurrency
// bounded overall and per host), or apply firmware to nodes (the
// ApplyStored* work, which reads available objects and their cached files
// from here and writes the apply history).
//
// It also owns the temporary caches of the inline applies
// (ApplyFirmwareObject, ApplySwitchSystemImage), <firmware_dir>/ephemeral/
// (Staging): Prepare makes one without any network I/O, and the apply's
// child jobs download into it on their own goroutines (Await), each
// artifact once per apply. Open removes every one a restart left behind.
//
// Cluster members (Options.Member) share firmware_dir and the store, and
// start and stop independently (a rolling upgrade), so at Open a member
// touches only its own work: the temporary download files tagged with its
// id (hw/firmware/download), its temporary caches, kept apart in
// <firmware_dir>/ephemeral/<member id>/, and the interrupted downloads of
// the objects it added (store.FirmwareObject.Downloader) or no member
// added. Another member's download may be running; if that member never
// comes back, a surviving member takes the object over (takeover.go):
// every member stamps a heartbeat on the objects whose background work it
// runs, every ClaimAfter/6, and at Open and on the same beat claims, with
// the store's compare-and-set, another member's interrupted object whose
// heartbeat and whose member's cluster row are both older than
// Options.ClaimAfter (six membership timeouts, from the member layer),
// then re-verifies it as its own. Exactly one member gets each; a member
// just started again (its row fresh) keeps its own. A single rmsd (no
// member id) re-verifies every interrupted object, as it always did, and
// takes nothing over.
//
// Why here: the catalog composes the firmware packages beside it
// (manifest, download, confine) with the store, and it imports no actor or
// gRPC package, as every hw/ package. It is not the gRPC edge, whose
// handlers are thin and whose goroutines must not outlive an RPC; not the
// store, which records what its callers decide and does no business logic;
// and not the job engine: upstream gives these downloads no job id (a
// caller polls FirmwareObject.available), they hold no node, and the
// engine's exclusion, capacity and retention have nothing to act on.
//
// Lifecycle:
//
//	Open ── reap its temporary files in firmware_dir, re-verify its interrupted objects ──▶ serving
//	serving ── every ClaimAfter/6 (cluster): heartbeat, take over gone members' interrupted objects ──▶ serving
//	serving ── Add: parse, check, store (available=false), start its download ──▶ serving
//	serving ── Delete: remove the row, cancel and await its download, remove its cache ──▶ serving
//	serving ── Close: refuse new downloads, cancel every running one and wait ──▶ closed
//
// Add answers once the object is stored; its artifacts are then fetched in
// a goroutine the Service owns, each artifact's state recorded as it
// changes (downloading, ready or failed). When all are verified the object
// becomes available; when any fails it stays unavailable, with the reason
// recorded in the store and logged. The access token is handed to that
// goroutine only: it is never stored, logged or put in an error.
//
// The log follows the store: Add logs the object added before its download
// can log anything, and the download logs its outcome (available, failed,
// stopped) just after recording it, so a line never reports what the store
// does not hold, and one polling the store may see an outcome a moment
// before its line. Everything a download logs is written once Delete or
// Close has returned.
//
// Every change the Service records (an object added or deleted, a default
// set, an artifact's download state, an object's availability) is
// published, just after the store holds it, to the subscribers of its
// change feed (Subscribe), which the web console follows. Publishing never
// waits: a subscriber whose buffer is full is dropped and must reread the
// catalog, as with the job engine's feed. The feed is closed by Close.
//
// A download cut short by Close (a shutdown or a crash) leaves the object
// unavailable with no reason. Open finds such objects and re-verifies their
// cached files: all present with the right SHA-256 makes the object
// available; otherwise it stays unavailable with a reason telling the caller
// to delete it and add it again, because the token needed to fetch the rest
// was never kept. Close must run before the store is closed.
package catalog
