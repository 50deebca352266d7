package main

import (
	"context"

	"github.com/rmsd/rmsd/member"
	"github.com/rmsd/rmsd/member/rackpb"
)

// A member's console shows the whole site's jobs (package sitejobs): it
// reads every rack's owner. The owner answers with the rack's engine and
// a change log that follows the engine from the moment the rack's service
// opens.

var _ member.JobsReader = (*rackService)(nil)

// ReadJobs implements member.JobsReader.
func (s *rackService) ReadJobs(ctx context.Context, read *rackpb.JobsRead) *rackpb.JobsReadReply {
	return s.reads.Read(ctx, read)
}

// startSiteJobs starts the console's following of every rack's changes,
// through the cluster this member has joined (nothing without a console).
func (d *daemon) startSiteJobs() {
	if d.console != nil && d.console.site != nil {
		d.console.site.Start(d.member.member)
	}
}
