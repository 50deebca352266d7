package rmsserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// laggingBatchEngine admits a batch and then loses the answer, as when the
// caller's deadline passes while the request waits in the registry's
// queue. Each child's workflow is parked until it is cancelled, then runs
// on its cancelled context: a child nobody cancels never ends. admitted
// receives the parent's id.
type laggingBatchEngine struct {
	JobEngine
	admitted chan<- string
}

func (l laggingBatchEngine) CreateBatch(ctx context.Context, parent messages.JobSpec, targets []messages.BatchTarget,
	cleanup *messages.CleanupPlan) (messages.CreateBatchReply, error) {
	parked := make([]messages.BatchTarget, len(targets))
	for i, bt := range targets {
		wf := bt.Workflow
		bt.Workflow = messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
			job.Progress("parked until cancelled")
			<-ctx.Done()
			wf.Run(ctx, job)
		})
		parked[i] = bt
	}
	if _, err := l.JobEngine.CreateBatch(ctx, parent, parked, cleanup); err != nil {
		return messages.CreateBatchReply{}, err
	}
	l.admitted <- parent.ID
	return messages.CreateBatchReply{}, fmt.Errorf("create batch %s: %w: %w", parent.ID, messages.ErrRegistryNotReached, context.DeadlineExceeded)
}

// assertBatchCancelled checks that the RPC answered DEADLINE_EXCEEDED, that
// the batch it admitted without an answer ended with every child failed,
// and that no node is left held.
func assertBatchCancelled(t *testing.T, engine *actors.Engine, admitted <-chan string, rpcErr error, children int) {
	t.Helper()
	if status.Code(rpcErr) != codes.DeadlineExceeded {
		t.Fatalf("batch RPC whose admission lost its answer: %v", rpcErr)
	}
	var parent string
	select {
	case parent = <-admitted:
	default:
		t.Fatal("the engine admitted no batch")
	}
	if err := engine.Wait(waitContext(t), parent); err != nil {
		t.Fatalf("the batch nobody knows about never ended (its children were not cancelled): %v", err)
	}
	jobs, err := engine.Get(rpcContext(t), parent, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1+children {
		t.Fatalf("%d jobs, want the parent and %d children", len(jobs), children)
	}
	for _, j := range jobs {
		if j.State != messages.StateFailed {
			t.Fatalf("job %s after the lost answer: %+v", j.ID, j)
		}
	}
	for _, c := range jobs[1:] {
		if !strings.Contains(c.ErrorMessage, "job cancelled") {
			t.Errorf("child %s does not say it was cancelled: %q", c.ID, c.ErrorMessage)
		}
	}
	if l, err := engine.Actors(rpcContext(t)); err != nil || l.HeldNodes != 0 {
		t.Fatalf("%d holds left (%v)", l.HeldNodes, err)
	}
}

func TestBatchFirmwareAdmittedWithoutAnAnswerCancelsEveryChild(t *testing.T) {
	f := startFirmwareRack(t, nil)
	admitted := make(chan string, 1)
	ts := startServer(t, Options{Logger: zerolog.Nop(), Deps: Deps{
		Racks: f.racks, Nodes: f.runner, Jobs: laggingBatchEngine{JobEngine: f.engine, admitted: admitted},
		Catalog: f.catalog, FirmwareDir: f.dir, FirmwareTiming: fastFirmwareTiming,
	}})
	client := rmspb.NewRackManagerClient(dial(t, ts.addr, nil))
	compute := f.ofKind(hw.KindCompute)[:3]
	pkg := f.stagePackage(t, "bmc-lost.fwpkg", "GB200Nvl-26.02-1")
	_, err := client.BatchUpdateFirmware(rpcContext(t), &rmspb.BatchUpdateFirmwareRequest{
		Nodes: nodeSet(compute...),
		FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{
			int32(compute[0].Type): {Targets: []*rmspb.FirmwareTarget{{Target: "FW_BMC_0", Filename: pkg}}},
		},
	})
	assertBatchCancelled(t, f.engine, admitted, err, len(compute))
}

func TestSwitchPasswordBatchAdmittedWithoutAnAnswerCancelsEveryChild(t *testing.T) {
	admitted := make(chan string, 1)
	a := startAdminRackWith(t, fastAdminTiming, func(d *Deps) {
		d.Jobs = laggingBatchEngine{JobEngine: d.Jobs, admitted: admitted}
	})
	sw := a.ofKind(hw.KindSwitch)[:3]
	_, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(sw...), Username: "admin", Password: secretPassword})
	assertBatchCancelled(t, a.engine, admitted, err, len(sw))
	for _, n := range sw {
		if a.loginWorks(t, n, "admin", secretPassword) {
			t.Errorf("%s: the password of a cancelled rotation was set", n.ID)
		}
	}
}

func TestSwitchResetBatchAdmittedWithoutAnAnswerCancelsEveryChild(t *testing.T) {
	admitted := make(chan string, 1)
	a := startAdminRackWith(t, fastAdminTiming, func(d *Deps) {
		d.Jobs = laggingBatchEngine{JobEngine: d.Jobs, admitted: admitted}
	})
	sw := a.ofKind(hw.KindSwitch)[:2]
	_, err := a.client.BatchResetSwitchFactoryDefault(rpcContext(t), &rmspb.BatchResetSwitchFactoryDefaultRequest{Nodes: nodeSet(sw...)})
	assertBatchCancelled(t, a.engine, admitted, err, len(sw))
}
