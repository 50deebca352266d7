// Package console is rmsd's read-only web console: the site (every rack a
// tile of its trays, switches and shelves), one rack's front view in slot
// order, the jobs, one job's stage timeline and children, and the firmware
// catalog. Pages are rendered on the server with html/template, so they
// work without JavaScript; a little plain JavaScript keeps them live, told
// of changes by server-sent events that come from the job engine's own
// change feed, rmsd's last-known power view and the firmware catalog's
// change feed, never from polling. FirmwareJobs follows the job feed for
// the firmware jobs that end, so the node's firmware is read again. The
// jobs come from Jobs: a single rmsd's job engine, or in cluster mode the
// whole site's (package sitejobs); a read some racks' owners did not
// answer is drawn with the others, naming the racks left out.
//
// The console only reads: the job registry answers who holds what and how
// each job stands, the rack registry which nodes exist, the power view what
// rmsd last read or set. It shows no credential: node endpoints are never
// rendered, and every id passes through html/template's escaping.
package console
