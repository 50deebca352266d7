package nvue_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

func TestSecretsNeverPrinted(t *testing.T) {
	const first, second, wrong = "First-Secret-11", "Second-Secret-22", "Wrong-Secret-33"
	var simLogs, logs bytes.Buffer
	cfg := nvossim.Config{Password: hw.NewSecret(first), Logger: zerolog.New(&simLogs).Level(zerolog.DebugLevel)}
	r := start(t, cfg, nil)
	opts := options()
	opts.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	c := newClient(t, r.sw.Endpoint(), opts)
	var texts []string
	nc, err := c.ChangePassword(r.ctx, "admin", hw.NewSecret(second))
	if err != nil {
		t.Fatal(err)
	}
	r.sw.FailRevisions("policy violation")
	_, err = nc.ChangePassword(r.ctx, "admin", hw.NewSecret(wrong))
	texts = append(texts, fmt.Sprint(err))
	_, err = c.System(r.ctx) // old password now: 401
	texts = append(texts, fmt.Sprint(err))
	texts = append(texts, fmt.Sprintf("%v %+v %#v %+v %v", opts, c.Endpoint(), nc.Endpoint(), cfg, r.sw))
	texts = append(texts, logs.String(), simLogs.String())
	for _, txt := range texts {
		for _, s := range []string{first, second, wrong} {
			if strings.Contains(txt, s) {
				t.Fatalf("secret %q printed in %q", s, txt)
			}
		}
	}
	if !strings.Contains(logs.String(), "nvue request") || !strings.Contains(simLogs.String(), "nvue request") {
		t.Fatal("the test must exercise logging")
	}
}
