package tui

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"
)

// windowStart is the first row shown of a list whose selection sel must
// stay in view in h lines.
func windowStart(sel, h int) int {
	if sel >= h {
		return sel - h + 1
	}
	return 0
}

// position is a list's position indicator, "9–16 of 40", when its n rows
// do not all fit in h lines; "" when they do.
func position(sel, n, h int) string {
	if h <= 0 || n <= h {
		return ""
	}
	start := windowStart(sel, h)
	return fmt.Sprintf("%d–%d of %d", start+1, min(start+h, n), n)
}

// titleWith is a pane title with right at its right end:
// "▶ Experiments (40) ──────── 9–16 of 40 ─".
func (m dashModel) titleWith(title, right string, focused bool, w int) string {
	if right == "" {
		return m.paneTitle(title, focused, w)
	}
	right = " " + right + " ─"
	rw := ansi.StringWidth(right)
	if rw+ansi.StringWidth(title)+4 > w {
		return m.paneTitle(title, focused, w)
	}
	return m.paneTitle(title, focused, w-rw) + m.c.Styles.Dim.Render(right)
}
