package main

import (
	"fmt"
	"os"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartFile is the scale chart's name, beside southbound.md.
const chartFile = "southbound.png"

// scaleChart draws three tiles against the number of racks: rmsd's start
// time, its resident set and the whole-site read times.
func scaleChart(points []scalePoint, path string) error {
	if len(points) == 0 {
		return fmt.Errorf("no scale points to chart")
	}
	secs := func(d time.Duration) float64 { return d.Seconds() }
	type series struct {
		name string
		y    func(scalePoint) float64
	}
	tiles := []struct {
		title, unit string
		series      []series
	}{
		{"rmsd start (exec to serving, racks registered)", "seconds", []series{{"rmsd", func(p scalePoint) float64 { return secs(p.ready) }}}},
		{"rmsd resident set", "MiB", []series{
			{"after start", func(p scalePoint) float64 { return float64(p.idleRSS) / (1 << 20) }},
			{"connections pooled", func(p scalePoint) float64 { return float64(p.warmRSS) / (1 << 20) }}}},
		{"whole-site power read", "seconds", []series{
			{"rmsd first", func(p scalePoint) float64 { return secs(p.first) }},
			{"rmsd warm", func(p scalePoint) float64 { return secs(p.warm) }},
			{"bare warm", func(p scalePoint) float64 { return secs(p.bareWarm) }}}},
	}
	row := make([]*plot.Plot, len(tiles))
	for i, t := range tiles {
		p := plot.New()
		p.Title.Text = t.title
		p.X.Label.Text = "racks (35 BMCs each)"
		p.Y.Label.Text = t.unit
		p.Legend.Top, p.Legend.Left = true, true
		for j, s := range t.series {
			xy := make(plotter.XYs, len(points))
			for k, pt := range points {
				xy[k] = plotter.XY{X: float64(pt.racks), Y: s.y(pt)}
			}
			line, dots, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("scale chart %s: %w", s.name, err)
			}
			line.Color, dots.Color = plotutil.Color(j), plotutil.Color(j)
			line.Width = vg.Points(1.5)
			p.Add(line, dots)
			p.Legend.Add(s.name, line, dots)
		}
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		row[i] = p
	}
	width, height := vg.Points(float64(len(tiles))*330), vg.Points(300)
	img := vgimg.New(width, height)
	dc := draw.New(img)
	canvases := plot.Align([][]*plot.Plot{row}, draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
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
