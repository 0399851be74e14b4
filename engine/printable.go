package engine

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Printable is s made safe to print on an operator's terminal: every
// control character (C0, DEL, C1; ESC among them) becomes a visible escape
// such as \x1b or \u009b, and bytes that are not UTF-8 become U+FFFD. Text
// an agent or a file supplies passes through it (or PrintableText) before
// the CLI or the TUI prints it, so no agent can drive the terminal.
func Printable(s string) string { return printable(s, "") }

// PrintableText is Printable but keeps newlines and tabs, for text shown
// over several lines.
func PrintableText(s string) string { return printable(s, "\n\t") }

// PrintableLine is Printable on one line: newlines, carriage returns and
// tabs become spaces.
func PrintableLine(s string) string {
	return Printable(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s))
}

func printable(s, keep string) string {
	if !needsEscape(s, keep) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteRune(utf8.RuneError)
		case IsControl(r) && !strings.ContainsRune(keep, r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsEscape(s, keep string) bool {
	for _, r := range s {
		if r == utf8.RuneError || IsControl(r) && !strings.ContainsRune(keep, r) {
			return true
		}
	}
	return false
}

// IsControl says whether r is a C0 or C1 control character or DEL: a rune
// that must not reach a terminal raw.
func IsControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// TerminalSafeJSON wraps w, which receives JSON, so that the two kinds of
// control character encoding/json leaves raw in strings, DEL and C1 (a
// terminal reads U+009B as CSI), are written as \u escapes: the same JSON
// value, and nothing in it can drive a terminal. JSON's structure is ASCII,
// so these runes only occur inside strings.
func TerminalSafeJSON(w io.Writer) io.Writer { return &safeJSON{w: w} }

type safeJSON struct {
	w    io.Writer
	lead bool // the previous write ended in 0xC2, the first byte of a C1 rune
}

func (s *safeJSON) Write(p []byte) (int, error) {
	n := len(p)
	out := make([]byte, 0, len(p)+8)
	if s.lead {
		if len(p) > 0 && p[0] >= 0x80 && p[0] <= 0x9f {
			out = fmt.Appendf(out, `\u%04x`, p[0])
			p = p[1:]
		} else {
			out = append(out, 0xC2)
		}
		s.lead = false
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == 0x7f:
			out = append(out, `\u007f`...)
		case c == 0xC2 && i+1 == len(p):
			s.lead = true
		case c == 0xC2 && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, p[i+1])
			i++
		default:
			out = append(out, c)
		}
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// TerminalSafeText wraps w so that every write passes through
// PrintableText: for a command's text output written a line (or a whole
// text) per write.
func TerminalSafeText(w io.Writer) io.Writer { return safeText{w: w} }

type safeText struct{ w io.Writer }

func (s safeText) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, PrintableText(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
