package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"
)

// hint is one key of the active keymap as the footer and the `?` overlay
// show it: only keys that can act in the screen's current state are hints.
type hint struct{ key, desc string }

// hintOf is the hint of a binding, in its own help words.
func hintOf(b key.Binding) hint { return hint{b.Help().Key, b.Help().Desc} }

// footerText renders hints in at most w cells: "k desc · k desc" when that
// fits, else the short form "k desc k desc", else the short form without
// its first hints. The last two hints (help and quit, by convention) are
// dropped last.
func footerText(hs []hint, w int) string {
	long := joinHints(hs, " · ")
	if ansi.StringWidth(long) <= w {
		return long
	}
	for drop := 0; drop < len(hs)-2; drop++ {
		if s := joinHints(hs[drop:], " "); ansi.StringWidth(s) <= w {
			return s
		}
	}
	return joinHints(hs[max(0, len(hs)-2):], " ")
}

func joinHints(hs []hint, sep string) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.key + " " + h.desc
	}
	return strings.Join(parts, sep)
}

// helpBox is the `?` overlay: the title and every hint, one a line.
func helpBox(title string, hs []hint, extra ...string) []string {
	kw := 0
	for _, h := range hs {
		kw = max(kw, ansi.StringWidth(h.key))
	}
	out := []string{title, ""}
	for _, h := range hs {
		out = append(out, "  "+h.key+strings.Repeat(" ", kw-ansi.StringWidth(h.key))+"  "+h.desc)
	}
	if len(extra) > 0 {
		out = append(out, "")
		out = append(out, extra...)
	}
	return append(out, "", "any key closes this help")
}

// overlay draws box over the lines of base (exactly w cells each), framed
// and centred; base shows around it. It keeps base's height.
func overlay(base, box []string, w int) []string {
	bw := 0
	for _, l := range box {
		bw = max(bw, ansi.StringWidth(l))
	}
	bw = min(bw+4, w)
	framed := []string{"┌" + strings.Repeat("─", max(0, bw-2)) + "┐"}
	for _, l := range box {
		framed = append(framed, "│ "+fit(l, max(0, bw-4))+" │")
	}
	framed = append(framed, "└"+strings.Repeat("─", max(0, bw-2))+"┘")
	top := max(0, (len(base)-len(framed))/2)
	left := max(0, (w-bw)/2)
	out := append([]string(nil), base...)
	for i, l := range framed {
		if top+i >= len(out) {
			break
		}
		row := fit(out[top+i], w)
		out[top+i] = fit(ansi.Cut(row, 0, left)+fit(l, bw)+ansi.Cut(row, left+bw, w), w)
	}
	return out
}
