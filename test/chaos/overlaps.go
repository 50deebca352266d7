package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// overlapsMetric is the simulator's count of pairs of holders (jobs or
// operation leases) that acted on one device at the same time.
const overlapsMetric = "rmsd_simulator_overlaps_total"

// overlaps scrapes the daemon's /metrics for overlapsMetric.
func overlaps(ctx context.Context, d *daemon) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.metricsAddr+"/metrics", nil)
	if err != nil {
		return 0, fmt.Errorf("scrape metrics: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("scrape metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		value, ok := strings.CutPrefix(sc.Text(), overlapsMetric+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("scrape metrics: %s %q: %w", overlapsMetric, value, err)
		}
		return int(v), nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("scrape metrics: %w", err)
	}
	return 0, fmt.Errorf("scrape metrics: no %s (is rmsd running with --simulate?)", overlapsMetric)
}
