package main

import (
	"testing"

	"github.com/rmsd/rmsd/member/etcdtest"
)

// TestClusterMembersThroughEtcd is
// TestClusterMembersShareRacksAndTakeOverAKilledMembersRacks with the
// members finding each other through a real etcd (member/etcdtest): every
// rack ends with exactly one grain, on the member holding its lease (which
// it cannot unless the members see each other: alone, each would activate
// every rack); a member killed with SIGKILL drops out once its etcd lease
// ends and the survivor owns all six, under higher epochs; the survivor,
// stopped with SIGTERM, exits 0 and releases them.
func TestClusterMembersThroughEtcd(t *testing.T) {
	membersShareRacksAndTakeOver(t, etcdtest.Start(t))
}
