// Package sitejobs shows a cluster's jobs, from any member, as a single
// rmsd's job engine shows its own: the console's listing (with the newest
// cluster parents as jobs of their own), one job with its children (a
// cluster parent aggregated from its racks' batches, package
// clusterparent), the holds, and a change feed. In cluster mode each rack's jobs live in the
// engine of the member owning the rack; Rack answers, on that member,
// the reads other members send the rack's grain (rackpb.JobsRead), with
// the rack's engine and a change log of its own; Site asks every rack's
// owner and merges the answers, and follows each rack's change log by long
// polls, turning the changes back into the engine's change feed type.
// Nothing here changes a job: the owner's registry stays the one owner of
// job state, and Site keeps no copy of it.
package sitejobs
