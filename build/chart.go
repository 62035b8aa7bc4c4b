package build

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/fediverse-observer/observer"
)

type series int

const (
	seriesLive series = iota // a line: live instances per day
	seriesNew                // bars: new instances per day
)

const chartW, chartH = 1000.0, 200.0

// chartSVG draws one series of the daily history as inline SVG, at build
// time, so the page needs no JavaScript. The drawing stretches to its box
// (preserveAspectRatio none, strokes that do not scale); labels belong in the
// surrounding HTML, where they keep their size on a phone. Colours come from
// CSS classes, so the theme decides them for light and dark.
func chartSVG(days []observer.DayCount, s series) template.HTML {
	if len(days) == 0 {
		return template.HTML(`<p class="chart-empty">No history yet.</p>`)
	}
	var peak int64
	for _, d := range days {
		peak = max(peak, value(d, s))
	}
	scale := func(v int64) float64 {
		if peak == 0 {
			return chartH
		}
		return chartH - float64(v)/float64(peak)*(chartH-4)
	}
	n := len(days)
	var b strings.Builder
	first, last := dateOnly(days[0].Day), dateOnly(days[n-1].Day)
	what := "Live instances"
	if s == seriesNew {
		what = "New instances"
	}
	label := fmt.Sprintf("%s per day from %s to %s: %d on the last day, at most %d.",
		what, first, last, value(days[n-1], s), peak)
	fmt.Fprintf(&b, `<svg class="chart chart-%s" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s" focusable="false">`,
		map[series]string{seriesLive: "live", seriesNew: "new"}[s], int(chartW), int(chartH), html.EscapeString(label))
	for _, f := range []float64{0.25, 0.5, 0.75} {
		y := ff(chartH - f*(chartH-4))
		fmt.Fprintf(&b, `<path class="grid" d="M0 %sH%d" vector-effect="non-scaling-stroke"/>`, y, int(chartW))
	}
	switch s {
	case seriesLive:
		step := 0.0
		if n > 1 {
			step = chartW / float64(n-1)
		}
		var line strings.Builder
		for i, d := range days {
			x := float64(i) * step
			if n == 1 {
				x = chartW / 2
			}
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			line.WriteString(cmd + ff(x) + " " + ff(scale(d.Live)))
		}
		if n == 1 {
			line.WriteString("h1")
		}
		l := line.String()
		fmt.Fprintf(&b, `<path class="area" d="%sV%dH0z"/>`, l, int(chartH))
		fmt.Fprintf(&b, `<path class="line" d="%s" vector-effect="non-scaling-stroke"/>`, l)
	case seriesNew:
		w := chartW / float64(n)
		gap := 0.0
		if w > 3 {
			gap = w * 0.2
		}
		var bars strings.Builder
		for i, d := range days {
			if d.New == 0 {
				continue
			}
			x := float64(i) * w
			fmt.Fprintf(&bars, "M%s %dV%sh%sV%dz", ff(x+gap/2), int(chartH), ff(scale(d.New)), ff(w-gap), int(chartH))
		}
		fmt.Fprintf(&b, `<path class="bars" d="%s"/>`, bars.String())
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func value(d observer.DayCount, s series) int64 {
	if s == seriesNew {
		return d.New
	}
	return d.Live
}

// ff formats a coordinate compactly.
func ff(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
