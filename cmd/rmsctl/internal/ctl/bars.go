package ctl

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// barScale is a bar's total: progress in thousandths.
const barScale = 1000

// minBarWidth is the narrowest a bar gets before the text beside it is
// cut to the terminal's width.
const minBarWidth = 10

// isTerminal says whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// barsView draws the live terminal view: the job's bar on top, one bar
// per child below it, each with the job's state and description. The
// parent's bar is its runbook stage when it reports one (a cold reboot, a
// fabric reconcile: its children only hold nodes and get no bars unless
// one fails), else its children finished out of all.
type barsView struct {
	out      *os.File
	progress *mpb.Progress
	parent   *jobBar
	runbook  bool
	children map[string]*jobBar
}

// jobBar is one job's bar and the text beside it, which mpb's renderer
// reads while the watcher writes it.
type jobBar struct {
	bar *mpb.Bar

	mu   sync.Mutex
	text string
	at   int64
}

// status is the text beside the bar after a space, whole when the
// terminal is wide enough, else cut so that a bar of minBarWidth still fits
// on the line: stat.AvailableWidth is what the line has left after the
// name and the percentage, and the bar's two margins, this leading space
// and the decorator's trailing one come off it too.
func (b *jobBar) status(stat decor.Statistics) string {
	b.mu.Lock()
	text := printable(b.text)
	b.mu.Unlock()
	return " " + fitWidth(text, stat.AvailableWidth-minBarWidth-4)
}

// fitWidth is text cut to width terminal columns, ending in "…" when cut.
func fitWidth(text string, width int) string {
	if runewidth.StringWidth(text) <= width {
		return text
	}
	if width < 1 {
		return ""
	}
	return runewidth.Truncate(text, width, "…")
}

// set moves the bar to fraction (never backwards) and its text.
func (b *jobBar) set(fraction float64, text string) {
	b.mu.Lock()
	b.text = text
	cur := int64(fraction * barScale)
	if cur > barScale-1 {
		cur = barScale - 1 // completion is finish's to declare
	}
	if cur > b.at {
		b.at = cur
	}
	at := b.at
	b.mu.Unlock()
	b.bar.SetCurrent(at)
}

// end completes the bar (a completed job) or stops it where it is.
func (b *jobBar) end(completed bool) {
	if completed {
		b.bar.SetCurrent(barScale)
		return
	}
	b.bar.Abort(false)
}

func newBarsView(ctx context.Context, out *os.File) *barsView {
	return &barsView{
		out:      out,
		progress: mpb.NewWithContext(ctx, mpb.WithConsoleWriter(newSizedTerminal(out)), mpb.WithRefreshRate(100*time.Millisecond)),
		children: map[string]*jobBar{},
	}
}

func (v *barsView) newBar(name string) *jobBar {
	jb := &jobBar{}
	jb.bar = v.progress.New(barScale,
		mpb.BarStyle().Lbound("[").Filler("=").Tip(">").Padding("-").Rbound("]"),
		mpb.PrependDecorators(decor.Name(printable(name), decor.WC{C: decor.DindentRight | decor.DextraSpace | decor.DSyncWidth})),
		mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5, C: decor.DextraSpace}),
			decor.Any(jb.status, decor.WC{C: decor.DindentRight | decor.DextraSpace})),
	)
	return jb
}

func (v *barsView) update(states []*rmspb.JobStatus) error {
	job, children := states[0], states[1:]
	if v.parent == nil {
		v.parent = v.newBar("job " + shortID(job.GetJobId()))
	}
	v.runbook = v.runbook || isRunbook(job)
	v.parent.set(parentFraction(job, children), parentText(job, children, v.runbook))
	for _, c := range children {
		b := v.children[c.GetJobId()]
		if b == nil && v.runbook && c.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
			continue // a runbook's hold on a node: its stage is the parent's
		}
		if b == nil {
			b = v.newBar(label(c))
			v.children[c.GetJobId()] = b
		}
		if c.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
			// Where it failed is unknown: the bar stays where it was.
			b.set(0, jobState(c.GetExecutionState())+": "+failureText(c))
			continue
		}
		b.set(leafFraction(c), jobState(c.GetExecutionState())+": "+c.GetStateDescription())
	}
	return nil
}

// finish completes the bars of completed jobs, stops the others, and waits
// for the last frame.
func (v *barsView) finish(final []*rmspb.JobStatus) {
	completed := map[string]bool{}
	for _, j := range final {
		completed[j.GetJobId()] = j.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED
	}
	for id, b := range v.children {
		b.end(completed[id])
	}
	if v.parent != nil && len(final) > 0 {
		v.parent.end(completed[final[0].GetJobId()])
	} else if v.parent != nil {
		v.parent.end(false)
	}
	v.progress.Wait()
	if len(final) > 0 {
		j := final[0]
		fmt.Fprintf(safeWriter{v.out}, "job %s %s: %s\n", j.GetJobId(), jobState(j.GetExecutionState()), j.GetStateDescription())
	}
}

// parentText is the text beside the parent's bar (and in its line): its
// stage when it names one, else its description, with how many children
// finished unless they are a runbook's holds.
func parentText(job *rmspb.JobStatus, children []*rmspb.JobStatus, runbook bool) string {
	state := jobState(job.GetExecutionState())
	if terminal(job.GetExecutionState()) {
		return state + ": " + job.GetStateDescription()
	}
	if st, ok := stageOfJob(job); ok {
		return state + ": " + st.String()
	}
	if len(children) > 0 && !runbook {
		return fmt.Sprintf("%s, %d/%d children finished: %s", state, finishedChildren(children), len(children), job.GetStateDescription())
	}
	return state + ": " + job.GetStateDescription()
}

// shortID keeps a bar's label narrow.
func shortID(id string) string {
	if len(id) > 13 {
		return id[:8] + "…"
	}
	return id
}
