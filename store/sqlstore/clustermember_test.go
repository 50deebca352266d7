package sqlstore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/rmsd/rmsd/store"
)

// TestMemberViewsAreFencedByTheMembersEpoch: a member's start takes the
// next epoch of its row; its view is read back by another member; once a
// later start of the same member id has taken the row, a write of the
// earlier process is refused and leaves the row alone.
func TestMemberViewsAreFencedByTheMembersEpoch(t *testing.T) {
	a, b := sharedPostgres(t)
	ctx := t.Context()
	first, err := a.JoinMember(ctx, "m-a", "sys-1", "127.0.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.JoinMember(ctx, "m-b", "sys-2", "127.0.0.1:7001"); err != nil {
		t.Fatal(err)
	}
	first.View = []string{"sys-2", "sys-0"}
	if err := a.WriteMemberView(ctx, first); err != nil {
		t.Fatal(err)
	}
	rows, err := b.MemberViews(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Member != "m-a" || rows[0].System != "sys-1" || rows[0].Address != "127.0.0.1:7000" ||
		!slices.Equal(rows[0].View, []string{"sys-0", "sys-2"}) || rows[0].Left || rows[1].Member != "m-b" || len(rows[1].View) != 0 {
		t.Fatalf("rows = %+v, want m-a seeing sys-0 and sys-2, m-b seeing nobody", rows)
	}

	// m-a starts again (a new process): the old one's writes are refused.
	second, err := b.JoinMember(ctx, "m-a", "sys-3", "127.0.0.1:7000")
	if err != nil {
		t.Fatal(err)
	}
	if second.Epoch <= first.Epoch {
		t.Fatalf("epoch of the second start %d, want above the first's %d", second.Epoch, first.Epoch)
	}
	first.Left = true
	if err := a.WriteMemberView(ctx, first); !errors.Is(err, store.ErrMemberSuperseded) {
		t.Fatalf("write of the replaced process = %v, want ErrMemberSuperseded", err)
	}
	second.Left = true
	if err := b.WriteMemberView(ctx, second); err != nil {
		t.Fatal(err)
	}
	rows, err = a.MemberViews(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].System != "sys-3" || rows[0].Epoch != second.Epoch || !rows[0].Left || len(rows[0].View) != 0 {
		t.Fatalf("m-a's row after its second start left = %+v", rows[0])
	}
}
