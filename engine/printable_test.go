package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, printable, text, line string }{
		{"plain", "within 1 %", "within 1 %", "within 1 %", "within 1 %"},
		{"OSC title", "a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`},
		{"DEL and C1", "x\x7fy\u009bz\u0085", `x\x7fy\u009bz\u0085`, `x\x7fy\u009bz\u0085`, `x\x7fy\u009bz\u0085`},
		{"newline and tab", "a\nb\tc\r", `a\x0ab\x09c\x0d`, "a\nb\tc\\x0d", "a b c "},
		{"not UTF-8", "a\xffb", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
		{"U+FFFD itself", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Printable(tt.in); got != tt.printable {
				t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.printable)
			}
			if got := PrintableText(tt.in); got != tt.text {
				t.Errorf("PrintableText(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := PrintableLine(tt.in); got != tt.line {
				t.Errorf("PrintableLine(%q) = %q, want %q", tt.in, got, tt.line)
			}
		})
	}
}

// TestTerminalSafeJSON: DEL and C1 runes, which encoding/json leaves raw,
// come out as \u escapes, also when a write splits a C1 rune, and the
// JSON still decodes to the same value.
func TestTerminalSafeJSON(t *testing.T) {
	t.Parallel()
	value := map[string]string{"statement": "a\x7fb\u009b2J\u0085 é \x1b[0m"}
	b, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	for split := range len(b) + 1 {
		var out strings.Builder
		w := TerminalSafeJSON(&out)
		for _, part := range [][]byte{b[:split], b[split:]} {
			if n, err := w.Write(part); err != nil || n != len(part) {
				t.Fatalf("Write = %d, %v; want %d", n, err, len(part))
			}
		}
		got := out.String()
		if strings.ContainsAny(got, "\x7f\u009b\u0085\x1b") {
			t.Fatalf("split at %d: a control passed raw: %q", split, got)
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back["statement"] != value["statement"] {
			t.Fatalf("split at %d: %q decodes to %q (%v)", split, got, back, err)
		}
	}
}
