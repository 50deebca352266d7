package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// reportFile is the report's name in -out.
const reportFile = "southbound.md"

// measureAndReport runs every scenario and writes the report and chart,
// printing the report too.
func measureAndReport(ctx context.Context, o options, log io.Writer) error {
	if o.siteRacks < 1 || o.rackCalls < 1 || o.rounds < 1 || o.firstRounds < 1 || len(o.scale) == 0 || o.firmwareMiB < 1 || o.admitNodes < 1 {
		return fmt.Errorf("site racks, rack calls, rounds, first rounds, firmware MiB and admission nodes must be at least 1, with one scale point or more")
	}
	res, err := runHarness(ctx, o, log)
	if err != nil {
		return err
	}
	if err := scaleChart(res.scale, filepath.Join(o.out, chartFile)); err != nil {
		return err
	}
	path := filepath.Join(o.out, reportFile)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render(f, res, chartFile); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := render(log, res, chartFile); err != nil {
		return err
	}
	_, err = fmt.Fprintf(log, "\nwrote %s and %s\n", path, filepath.Join(o.out, chartFile))
	return err
}
