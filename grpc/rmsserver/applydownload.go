package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/messages"
)

// The inline applies (ApplyFirmwareObject, ApplySwitchSystemImage) answer
// before anything is downloaded: the RPC validates what it can without
// I/O, prepares a temporary cache (catalog.Staging), admits the parent and
// one child per node, and replies with their ids. Each child then runs a
// stage 0 of its own: it awaits the artifacts its node needs, downloaded
// once per apply and shared by the children that need them, and only then
// runs its node's update. A failed download fails the children that need
// that artifact, naming it; the others go on. Cancelling a child (or the
// parent) stops its downloads. The parent's cleanup plan removes the cache
// once every child is terminal; after a restart the catalog removes every
// leftover cache and the engine fails the interrupted children.
//
// Upstream: handle_apply_firmware_object precreates the jobs and answers,
// run_apply_firmware_object_job and run_apply_switch_system_image_job
// download in "Stage 0" (one download for the whole batch, whose failure
// fails every child) and spawn_ephemeral_object_cache_cleanup removes the
// cache once the children are terminal.

// artifactGate is a child of an inline apply: stage 0, then next.
type artifactGate struct {
	staging *catalog.Staging
	// names are the artifacts the child's node needs.
	names []string
	// what the stage downloads, in its description ("firmware artifacts").
	what string
	// check, optional, vets the downloaded artifacts before next runs; its
	// error fails the child as an invalid argument.
	check func() error
	// noun names the update in failures ("Firmware update").
	noun string
	next messages.Workflow
}

// Run awaits the artifacts, reporting "Stage 0: downloading <what> (k/n)",
// then runs the node's workflow.
func (g artifactGate) Run(ctx context.Context, job messages.Reporter) {
	total := len(g.names)
	job.Progress(downloadStage(g.what, 0, total))
	err := g.staging.Await(ctx, g.names, func(ready int) { job.Progress(downloadStage(g.what, ready, total)) })
	switch {
	case ctx.Err() != nil:
		msg := fmt.Sprintf("%s job cancelled while downloading its artifacts", lowerFirst(g.noun))
		if errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
			msg += ": rmsd is shutting down"
		}
		g.fail(job, messages.ErrorOther, g.noun+" cancelled", msg)
		return
	case err != nil:
		g.fail(job, messages.ErrorClientError, g.noun+" failed in stage 0", "artifacts not downloaded: "+err.Error())
		return
	}
	if g.check != nil {
		if err := g.check(); err != nil {
			g.fail(job, messages.ErrorInvalidArgument, g.noun+" failed in stage 0", err.Error())
			return
		}
	}
	g.next.Run(ctx, job)
}

func (g artifactGate) fail(job messages.Reporter, code messages.JobError, description, msg string) {
	f := messages.NewFailure(code, clip(msg, maxMessage))
	f.Description = description
	_ = job.Fail(f)
}

// downloadStage is the description of a child in stage 0.
func downloadStage(what string, ready, total int) string {
	return fmt.Sprintf("Stage 0: downloading %s (%d/%d)", what, ready, total)
}

// lowerFirst lowercases an ASCII first letter.
func lowerFirst(s string) string {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// stageFirmwareBatch points every planned node's packages into the
// staging directory, makes each child await them first and has the
// parent's cleanup remove the directory.
func stageFirmwareBatch(b *firmwareBatch, st *catalog.Staging) {
	names := make([][]string, len(b.nodes))
	for i := range b.nodes {
		for j := range b.nodes[i].plan.Targets {
			t := &b.nodes[i].plan.Targets[j]
			names[i] = append(names[i], t.File)
			t.File = filepath.Join(st.Dir(), t.File)
		}
	}
	b.cleanup = &messages.CleanupPlan{Dir: st.Dir()}
	b.gate = func(i int, wf messages.Workflow) messages.Workflow {
		return artifactGate{staging: st, names: names[i], what: "firmware artifacts", noun: "Firmware update", next: wf}
	}
}

// stageImageBatch has each child of a switch image batch await the NVOS
// image in the staging directory (and check it is one) first, and the
// parent's cleanup remove the directory.
func stageImageBatch(b *imageBatch, st *catalog.Staging) {
	name := b.image.name
	b.image.path = filepath.Join(st.Dir(), name)
	path := b.image.path
	b.cleanup = &messages.CleanupPlan{Dir: st.Dir()}
	b.gate = func(wf messages.Workflow) messages.Workflow {
		return artifactGate{staging: st, names: []string{name}, what: "the NVOS system image", noun: "Switch system image update",
			check: func() error { return checkImageFile(path) }, next: wf}
	}
}

// dropStaging removes a staging directory no job was admitted to use.
func (m *rackManager) dropStaging(st *catalog.Staging) {
	if err := os.RemoveAll(st.Dir()); err != nil {
		m.log.Warn().Str("path", st.Dir()).Err(err).Msg("temporary firmware cache not removed")
	}
}
