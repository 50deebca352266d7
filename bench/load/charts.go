package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The charts' file names, beside report.md.
const (
	latencyChart = "latency.png"
	ratioChart   = "ratios.png"
)

// cdfPoints is the most points one latency curve is drawn with.
const cdfPoints = 400

// latencyPlot draws one tile per RPC: the cumulative distribution of its
// latencies on both servers, latency on a logarithmic axis.
func latencyPlot(sums []summary, path string) error {
	var rpcs []string
	byRPC := map[string][]summary{}
	for _, s := range sums {
		if _, ok := byRPC[s.rpc]; !ok {
			rpcs = append(rpcs, s.rpc)
		}
		byRPC[s.rpc] = append(byRPC[s.rpc], s)
	}
	if len(rpcs) == 0 {
		return fmt.Errorf("no measurements to chart")
	}
	const cols = 2
	rows := (len(rpcs) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	for i, rpc := range rpcs {
		p := plot.New()
		p.Title.Text = rpc
		p.X.Label.Text = "latency (ms, log scale)"
		p.Y.Label.Text = "fraction of calls"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top = false
		p.Legend.Left = false
		for j, s := range byRPC[rpc] {
			line, err := plotter.NewLine(cdf(s.latencies))
			if err != nil {
				return fmt.Errorf("latency curve of %s on %s: %w", rpc, s.server, err)
			}
			line.Color = plotutil.Color(j)
			line.Width = vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(fmt.Sprintf("%s (p50 %s)", s.server, duration(s.p50)), line)
		}
		p.Add(plotter.NewGrid())
		plots[i/cols][i%cols] = p
	}
	return savePlots(plots, path, vg.Points(float64(cols)*380), vg.Points(float64(rows)*300))
}

// cdf samples the cumulative distribution of sorted latencies, in
// milliseconds, at no more than cdfPoints points.
func cdf(sorted []time.Duration) plotter.XYs {
	n := len(sorted)
	step := max(1, n/cdfPoints)
	var xy plotter.XYs
	for i := 0; i < n; i += step {
		xy = append(xy, plotter.XY{X: ms(sorted[i]), Y: float64(i+1) / float64(n)})
	}
	if n > 0 && xy[len(xy)-1].Y < 1 {
		xy = append(xy, plotter.XY{X: ms(sorted[n-1]), Y: 1})
	}
	return xy
}

// ms is d in milliseconds, never below a nanosecond (a log axis has no 0).
func ms(d time.Duration) float64 {
	return math.Max(float64(d), 1) / float64(time.Millisecond)
}

// ratioPlot draws, per RPC, how many times the bare server's cost rmsd's
// is: latency at p50 and p99, CPU per call and time per call at full
// throughput (bare calls/s over rmsd's), as bars on a logarithmic axis.
func ratioPlot(rs []ratio, path string) error {
	if len(rs) == 0 {
		return fmt.Errorf("no ratios to chart")
	}
	p := plot.New()
	p.Title.Text = "rmsd cost as a multiple of the bare grpc-go server's"
	p.Y.Label.Text = "rmsd / bare (log scale)"
	p.Y.Tick.Marker = timesTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	series := []struct {
		name string
		of   func(ratio) float64
	}{
		{"p50 latency", func(r ratio) float64 { return r.p50 }},
		{"p99 latency", func(r ratio) float64 { return r.p99 }},
		{"CPU per call", func(r ratio) float64 { return r.cpu }},
		{"1 / throughput", func(r ratio) float64 { return 1 / r.rps }},
	}
	w := vg.Points(16)
	var names []string
	for _, r := range rs {
		names = append(names, r.rpc)
	}
	lo, hi := 0.0, 1.0
	for i, s := range series {
		vals := make(plotter.Values, len(rs))
		for j, r := range rs {
			v := s.of(r)
			if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				vals[j] = math.Log10(v)
			}
			lo, hi = min(lo, vals[j]), max(hi, vals[j])
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return fmt.Errorf("ratio bars %s: %w", s.name, err)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(bars)
		p.Legend.Add(s.name, bars)
	}
	p.Y.Min, p.Y.Max = math.Floor(lo), math.Ceil(hi)+0.5 // room for the legend
	p.NominalX(names...)
	p.Add(plotter.NewGrid())
	return savePlots([][]*plot.Plot{{p}}, path, vg.Points(760), vg.Points(420))
}

// timesTicks labels a log10 axis with the ratios, 1×, 10×, 100×.
type timesTicks struct{}

// Ticks puts a major tick at every power of ten from min to max.
func (timesTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Ceil(lo); e <= hi; e++ {
		ts = append(ts, plot.Tick{Value: e, Label: strconv.FormatFloat(math.Pow(10, e), 'g', -1, 64) + "×"})
	}
	return ts
}

// savePlots draws plots in a grid of tiles into a PNG of width × height.
func savePlots(plots [][]*plot.Plot, path string, width, height vg.Length) error {
	img := vgimg.New(width, height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j, p := range plots[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
