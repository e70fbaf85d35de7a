package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// plotSVG draws the -every intervals as an SVG: p99 (and p50) latency over
// time above, each replica's resident memory below. It needs no plotting
// library: two panels of polylines with labelled axes.
func plotSVG(w io.Writer, title string, ivs []Interval) error {
	const (
		width, panelH = 760, 220
		left, right   = 64, 24
		top, gap      = 40, 60
	)
	height := top + 2*panelH + gap + 40
	if len(ivs) == 0 {
		return fmt.Errorf("plot: no intervals (run with -every)")
	}
	tmax := ivs[len(ivs)-1].AtS
	replicas := 0
	for _, iv := range ivs {
		replicas = max(replicas, len(iv.RSSMiB))
	}
	x := func(t float64) float64 { return left + (width-left-right)*t/math.Max(tmax, 1) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="20" font-size="14">%s</text>`+"\n", left, escapeXML(title))

	panel := func(y0 int, label string, series [][]float64, names []string, colors []string) {
		ymax := 0.0
		for _, s := range series {
			for _, v := range s {
				ymax = math.Max(ymax, v)
			}
		}
		ymax = niceCeil(ymax * 1.1)
		y := func(v float64) float64 { return float64(y0+panelH) - panelH*v/ymax }
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0, width-left-right, panelH)
		for i := 0; i <= 4; i++ {
			v := ymax * float64(i) / 4
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
				left, width-right, y(v), y(v), left-6, y(v)+4, trimFloat(v))
		}
		fmt.Fprintf(&b, `<text x="12" y="%d" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>`+"\n", y0+panelH/2, y0+panelH/2, label)
		for i, s := range series {
			var pts []string
			for j, v := range s {
				if v < 0 { // a replica that did not answer /metrics
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(ivs[j].AtS), y(v)))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colors[i%len(colors)], strings.Join(pts, " "))
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", left+10+110*i, y0+16, colors[i%len(colors)], escapeXML(names[i]))
		}
	}
	p50, p99 := make([]float64, len(ivs)), make([]float64, len(ivs))
	rss := make([][]float64, replicas)
	for i := range rss {
		rss[i] = make([]float64, len(ivs))
	}
	for j, iv := range ivs {
		p50[j], p99[j] = iv.P50ms, iv.P99ms
		for i := range rss {
			rss[i][j] = -1
			if i < len(iv.RSSMiB) {
				rss[i][j] = iv.RSSMiB[i]
			}
		}
	}
	panel(top, "latency (ms)", [][]float64{p99, p50}, []string{"p99", "p50"}, []string{"#c0392b", "#2c7fb8"})
	names := make([]string, replicas)
	for i := range names {
		names[i] = fmt.Sprintf("replica %d RSS", i+1)
	}
	panel(top+panelH+gap, "RSS (MiB)", rss, names, []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a"})
	for i := 0; i <= 6; i++ {
		t := tmax * float64(i) / 6
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(t), top+2*panelH+gap+18, trimFloat(t/60)+" min")
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

func escapeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// writePlot writes the run's plot to path.
func writePlot(path string, o options, ivs []Interval) error {
	title := fmt.Sprintf("oml-load on %d replica(s): %d workers", len(o.urls), o.concurrency)
	if o.rate > 0 {
		title += fmt.Sprintf(", %.0f ops/s", o.rate)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := plotSVG(f, title, ivs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
