package sitejobs

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/test/leakcheck"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.ProtoactorThrottle)
}
