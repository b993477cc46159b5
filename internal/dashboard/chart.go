package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// Charts are SVG drawn on the server: no script, nothing to load, readable
// by assistive technology through their titles and the tables beside them.
// Only numbers and escaped labels go into the markup.

// bar is one bar of a bar chart.
type bar struct {
	Label string
	Value float64
	Text  string // the value as shown
}

// barChart draws horizontal bars, one per item, scaled to the largest.
func barChart(title string, bars []bar) template.HTML {
	if len(bars) == 0 {
		return ""
	}
	const rowH, labelW, barW = 26, 190, 320
	top := 0.0
	for _, b := range bars {
		top = math.Max(top, b.Value)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %d %d" aria-labelledby="c-%s"><title id="c-%s">%s</title>`,
		labelW+barW+120, rowH*len(bars)+4, idOf(title), idOf(title), template.HTMLEscapeString(title))
	for i, b := range bars {
		w := 0.0
		if top > 0 {
			w = b.Value / top * barW
		}
		y := i*rowH + 2
		fmt.Fprintf(&sb, `<text x="0" y="%d" class="label">%s</text>`, y+17, template.HTMLEscapeString(b.Label))
		fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%.1f" height="%d" class="bar"></rect>`, labelW, y+3, math.Max(w, 1), rowH-8)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d" class="value">%s</text>`, float64(labelW)+math.Max(w, 1)+6, y+17,
			template.HTMLEscapeString(b.Text))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) //nolint:gosec // numbers and escaped labels only
}

// point is one point of a line chart.
type point struct {
	Label string
	Value float64
}

// lineChart draws values over time with the first and last labels and the
// range of values on the axis.
func lineChart(title string, pts []point, format func(float64) string) template.HTML {
	if len(pts) < 2 {
		return ""
	}
	const w, h, padL, padB = 640.0, 200.0, 110.0, 24.0
	lo, hi := pts[0].Value, pts[0].Value
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
	}
	if hi == lo {
		hi, lo = hi+1, lo-1
	}
	x := func(i int) float64 { return padL + float64(i)*(w-padL-10)/float64(len(pts)-1) }
	y := func(v float64) float64 { return 10 + (hi-v)/(hi-lo)*(h-padB-20) }
	var path strings.Builder
	for i, p := range pts {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(i), y(p.Value))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" role="img" viewBox="0 0 %.0f %.0f" aria-labelledby="c-%s"><title id="c-%s">%s</title>`,
		w, h, idOf(title), idOf(title), template.HTMLEscapeString(title))
	fmt.Fprintf(&sb, `<line x1="%.0f" y1="10" x2="%.0f" y2="%.0f" class="axis"></line>`, padL, padL, h-padB)
	fmt.Fprintf(&sb, `<text x="0" y="%.1f" class="label">%s</text>`, y(hi)+5, template.HTMLEscapeString(format(hi)))
	fmt.Fprintf(&sb, `<text x="0" y="%.1f" class="label">%s</text>`, y(lo)+5, template.HTMLEscapeString(format(lo)))
	fmt.Fprintf(&sb, `<path d="%s" class="line"></path>`, strings.TrimSpace(path.String()))
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" class="label">%s</text>`, padL, h-4, template.HTMLEscapeString(pts[0].Label))
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" class="label end">%s</text>`, w-10, h-4, template.HTMLEscapeString(pts[len(pts)-1].Label))
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) //nolint:gosec // numbers and escaped labels only
}

func idOf(title string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(title) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
