package forward

import (
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// A cluster parent's record never changes once written, so a member reads
// it from the store at most once: the member that recorded it never, any
// other on its first poll (after the job → rack record it also asks for),
// and no poll after that reads the store at all. An id the store does not
// know is asked for anew on every poll, so that a parent written after a
// miss is found.
func TestAClusterParentIsReadFromTheStoreAtMostOncePerMember(t *testing.T) {
	s := startSite(t, 2)
	a, ca := s.countingMember(t, "member-a")
	b, cb := s.countingMember(t, "member-b")
	nodes := append(append([]hw.Node(nil), s.nodes[s.racks[0]]...), s.nodes[s.racks[1]]...)
	resp, err := a.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(nodes...), Username: "admin", Password: "Next-Pass-1"})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetResponse().GetJobId()
	if id == "" {
		t.Fatalf("no cluster parent: %v", resp.GetResponse())
	}
	states := waitJob(t, a, id)
	if states[0].GetExecutionState() != completed || len(states) != 5 {
		t.Fatalf("parent %v (%d states)", states[0], len(states))
	}
	if jobRacks, parents := ca.reads(); jobRacks != 0 || parents != 0 {
		t.Errorf("the recording member read %d job racks and %d parents from the store, want none", jobRacks, parents)
	}

	for i := range 3 {
		got, err := b.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true})
		if err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		if st := got.GetJobStates(); len(st) != 5 || st[0].GetStateDescription() != states[0].GetStateDescription() ||
			!equalStrings(st[0].GetChildJobIds(), states[0].GetChildJobIds()) {
			t.Fatalf("poll %d through member-b: %v, member-a read %v", i, st[0], states[0])
		}
	}
	fw, err := b.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: id})
	if err != nil || fw.GetJobState() != rmspb.FirmwareJobState(completed) {
		t.Errorf("GetFirmwareJobStatus of the cluster parent: %v %v", fw, err)
	}
	if jobRacks, parents := cb.reads(); jobRacks != 1 || parents != 1 {
		t.Errorf("4 polls through member-b read %d job racks and %d parents from the store, want 1 and 1", jobRacks, parents)
	}

	unknown := uuid.NewString()
	for i := range 2 {
		_, err := b.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: unknown})
		if status.Code(err) != codes.NotFound {
			t.Fatalf("poll %d of an unknown id: %v", i, err)
		}
	}
	if jobRacks, parents := cb.reads(); jobRacks != 3 || parents != 3 {
		t.Errorf("after 2 polls of an unknown id member-b read %d job racks and %d parents, want 3 and 3 (misses are not cached)", jobRacks, parents)
	}
	// Another member records a parent under that id now (as no member
	// would: the ids are new UUIDs): member-b finds it.
	p, err := s.store.ClusterParent(rpcContext(t), id)
	if err != nil {
		t.Fatal(err)
	}
	p.ID, p.Member = unknown, "member-c"
	if _, err := s.store.CreateClusterParent(rpcContext(t), p); err != nil {
		t.Fatal(err)
	}
	got, err := b.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: unknown, IncludeChildJobStates: true})
	if err != nil || len(got.GetJobStates()) != 5 || got.GetJobStates()[0].GetJobId() != unknown ||
		got.GetJobStates()[0].GetExecutionState() != completed {
		t.Errorf("the parent written after the misses: %v, %v", got, err)
	}
}
