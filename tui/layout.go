package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// fit truncates or pads s (which may hold styles) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// block renders lines as exactly h lines of exactly w cells (none when h
// is not positive).
func block(lines []string, w, h int) []string {
	out := make([]string, max(h, 0))
	for i := range out {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		out[i] = fit(l, w)
	}
	return out
}

// hjoin puts blocks of equal height side by side with a separator.
func hjoin(sep string, blocks ...[]string) []string {
	if len(blocks) == 0 {
		return nil
	}
	out := make([]string, len(blocks[0]))
	for i := range out {
		parts := make([]string, len(blocks))
		for j, b := range blocks {
			if i < len(b) {
				parts[j] = b[i]
			}
		}
		out[i] = strings.Join(parts, sep)
	}
	return out
}

// paneTitle is a pane's header line: "▶ Title ────" when focused.
func (m dashModel) paneTitle(title string, focused bool, w int) string {
	mark := "  "
	st := m.c.Styles.Title
	if focused {
		mark, st = "▶ ", m.c.Styles.Focus
	}
	head := mark + title + " "
	return st.Render(head) + m.c.Styles.Dim.Render(strings.Repeat("─", max(0, w-ansi.StringWidth(head))))
}

// window returns the rows visible in h lines with the selection sel kept
// in view, marking the selected row when the pane is focused.
// Only those rows are rendered.
func (m dashModel) window(rows rowList, sel, h int, focused bool) []string {
	if h <= 0 {
		return nil
	}
	start := windowStart(sel, h)
	var out []string
	for i := start; i < rows.n && len(out) < h; i++ {
		text := rows.row(i)
		r := "  " + text
		if focused && i == sel {
			r = "› " + text
			r = m.c.Styles.Selected.Render(r)
		}
		out = append(out, r)
	}
	return out
}

// wrap breaks text into lines of at most w cells.
func wrap(text string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(strings.TrimSpace(text), "\n") {
		wrapped := ansi.Wordwrap(para, w, "")
		wrapped = ansi.Hardwrap(wrapped, w, true)
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// human formats a byte count: 512B, 12.3M, 1.2G.
func human(b int64) string {
	switch {
	case b < 1<<10:
		return fmt.Sprintf("%dB", b)
	case b < 1<<20:
		return fmt.Sprintf("%.0fK", float64(b)/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.1fM", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1fG", float64(b)/(1<<30))
}

// dur formats a duration as 1h02m, 4m05s or 12s.
func dur(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// backendLabel is the mode indicator of an execution backend.
func backendLabel(b string) string {
	if d, ok := engine.DescribeBackend(b); ok {
		return d.Short
	}
	switch b {
	case "auto":
		return "Auto"
	case "":
		return "—"
	}
	return b
}

// claimMarker is the claim tree's status marker.
func claimMarker(status string) string {
	switch status {
	case "supported":
		return "✓"
	case "falsified":
		return "×"
	case "unresolved":
		return "?"
	}
	return "●"
}
