package nvue_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// BenchmarkSystemRead compares the client's GET /nvue_v1/system (auth,
// status mapping, JSON decoding) with a bare net/http GET of the same
// resource on the same simulated switch, in the same run.
func BenchmarkSystemRead(b *testing.B) {
	sw, err := nvossim.New(nvossim.Config{TimeScale: 0.001})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := sw.Start(ctx, "127.0.0.1"); err != nil {
		b.Fatal(err)
	}
	defer sw.Close()
	ep := sw.Endpoint()

	b.Run("baseline-net-http", func(b *testing.B) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // benchmark baseline against the simulator
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr}
		url := "https://" + ep.IP + ":" + strconv.Itoa(ep.Port) + "/nvue_v1/system"
		b.ResetTimer()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatal(resp.Status)
			}
		}
	})
	b.Run("nvue-client", func(b *testing.B) {
		c, err := nvue.New(ep, nvue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.System(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
