package bench

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// seriesColor is each system's colour in the chart.
var seriesColor = map[string]string{
	Gateway: "#1f77b4",
	Kfake:   "#ff7f0e",
	Native:  "#2ca02c",
	SDK:     "#9467bd",
	Kafka:   "#d62728",
}

// The chart's geometry, in SVG user units.
const (
	svgWidth    = 980
	svgHeight   = 480
	panelLeft   = 70  // left edge of the first plot area
	panelTop    = 90  // top edge of the plot areas
	panelWidth  = 380 // width of one plot area
	panelHeight = 280
	panelGap    = 110 // between the two plot areas
	svgTicks    = 5   // about this many y ticks
)

// WriteScaleSVG draws the scale points as an SVG chart: one panel per
// phase (produce, consume), MB/s against the points (producers ×
// partitions, then the points with idle connections), one series per
// system of the run's ScaleSystems, the median as a marker and the rounds' range as
// a whisker. The points without idle connections are joined by a line;
// those with idle connections are hollow markers, apart from the line.
func (r *Results) WriteScaleSVG(w io.Writer) error {
	pts := r.Config.Scale
	if len(pts) == 0 {
		return errors.New("bench: no scale points to chart")
	}
	ymax := 0.0
	for _, pt := range pts {
		for _, sys := range r.ScaleSystems() {
			for _, ph := range Phases {
				ymax = max(ymax, r.Figures(pt.Name(), sys, ph).MaxMBps)
			}
		}
	}
	step := niceStep(ymax / svgTicks)
	top := step * math.Max(1, math.Ceil(ymax/step))
	x := func(panel, i int) float64 {
		return float64(panelLeft+panel*(panelWidth+panelGap)) + (float64(i)+0.5)*panelWidth/float64(len(pts))
	}
	y := func(v float64) float64 { return panelTop + panelHeight*(1-v/top) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgWidth, svgHeight)
	text(&b, svgWidth/2, 24, "middle", 16, fmt.Sprintf("Throughput against producers and partitions, %s values", CaseName(ScaleSize, ScaleKind)))
	text(&b, svgWidth/2, 42, "middle", 12, fmt.Sprintf("medians of %d rounds; whiskers: the rounds' range; hollow markers: with idle connections open", r.Config.Rounds))
	sub := fmt.Sprintf("%d MiB of values per point", r.Config.ScaleBytes>>20)
	if !r.Started.IsZero() {
		sub += ", measured " + r.Started.Format("2006-01-02")
	}
	if r.Revision != "" {
		sub += ", gateway at " + r.Revision
	}
	text(&b, svgWidth/2, 58, "middle", 12, sub)

	for panel, ph := range Phases {
		left := float64(panelLeft + panel*(panelWidth+panelGap))
		b.WriteString(`<g class="axes">` + "\n")
		for v := 0.0; v <= top+step/2; v += step {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(v), left+panelWidth, y(v))
			text(&b, left-6, y(v)+4, "end", 11, fmt.Sprintf("%.0f", v))
		}
		fmt.Fprintf(&b, `<polyline points="%.1f,%d %.1f,%d %.1f,%d" fill="none" stroke="black"/>`+"\n",
			left, panelTop, left, panelTop+panelHeight, left+panelWidth, panelTop+panelHeight)
		for i, pt := range pts {
			if i > 0 && pt.IdleConns > 0 && pts[i-1].IdleConns == 0 {
				sx := left + float64(i)*panelWidth/float64(len(pts))
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999" stroke-dasharray="4 4"/>`+"\n", sx, panelTop, sx, panelTop+panelHeight)
			}
			lines := []string{fmt.Sprintf("%d × %d", pt.Producers, pt.Partitions)}
			if pt.IdleConns > 0 {
				lines = append(lines, fmt.Sprintf("+ %d idle", pt.IdleConns))
			}
			for j, l := range lines {
				text(&b, x(panel, i), float64(panelTop+panelHeight+18+14*j), "middle", 11, l)
			}
		}
		text(&b, left+panelWidth/2, panelTop-10, "middle", 13, ph)
		text(&b, left+panelWidth/2, panelTop+panelHeight+52, "middle", 12, "producers × partitions")
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12" transform="rotate(-90 %.1f %.1f)">MB/s</text>`+"\n",
			left-48, float64(panelTop+panelHeight/2), left-48, float64(panelTop+panelHeight/2))
		b.WriteString("</g>\n")
	}

	for _, sys := range r.ScaleSystems() {
		color := seriesColor[sys]
		fmt.Fprintf(&b, `<g class="series" data-system="%s" stroke="%s" fill="%s">`+"\n", esc(sys), color, color)
		for panel, ph := range Phases {
			var line []string
			for i, pt := range pts {
				f := r.Figures(pt.Name(), sys, ph)
				if f.Rounds == 0 {
					continue
				}
				cx, cy := x(panel, i), y(f.MBps)
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke-width="1"/>`+"\n", cx, y(f.MinMBps), cx, y(f.MaxMBps))
				fill := color
				if pt.IdleConns > 0 {
					fill = "white"
				} else {
					line = append(line, fmt.Sprintf("%.1f,%.1f", cx, cy))
				}
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke-width="1.5"><title>%s</title></circle>`+"\n",
					cx, cy, fill, esc(fmt.Sprintf("%s, %s, %s: %.0f MB/s (%.0f–%.0f)", sys, ph, pt.Name(), f.MBps, f.MinMBps, f.MaxMBps)))
			}
			if len(line) > 1 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke-width="2"/>`+"\n", strings.Join(line, " "))
			}
		}
		b.WriteString("</g>\n")
	}

	b.WriteString(`<g class="legend">` + "\n")
	lx := float64(panelLeft)
	ly := float64(svgHeight - 24)
	for _, sys := range r.ScaleSystems() {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", lx, ly-4, lx+24, ly-4, seriesColor[sys])
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`+"\n", lx+12, ly-4, seriesColor[sys])
		label := systemLabel[sys]
		text(&b, lx+30, ly, "start", 12, label)
		lx += 30 + 6.5*float64(len([]rune(label))) + 24
	}
	b.WriteString("</g>\n</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep is the smallest of 1, 2 or 5 times a power of ten at or above
// raw; 1 for nothing to scale.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func text(b *strings.Builder, x, y float64, anchor string, size int, s string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d">%s</text>`+"\n", x, y, anchor, size, esc(s))
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
