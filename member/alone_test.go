package member

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// aloneEnv marks the test process inAlone started.
const aloneEnv = "RMSD_MEMBER_TEST_ALONE"

// inAlone reports whether t runs in a process of its own. When it does
// not, it runs t's test again in a new process of this test binary (the
// same flags: race detector, coverage), fails t with that process's
// output unless the test passed there, and reports false: t's caller
// returns. protoactor's remote replaces gRPC's global logger each time it
// starts, unsynchronised with the gRPC goroutines earlier tests left
// reading it (a closed client's last connection attempt), so a test that
// starts a remote after other tests' gRPC clients starts it alone.
func inAlone(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == "1" {
		return true
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), aloneEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name()+" ")) {
		t.Fatalf("%s in a process of its own: %v, want it run and passed:\n%s", t.Name(), err, out)
	}
	return false
}
