package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawControls are bytes and sequences that drive a terminal: ESC, BEL,
// DEL and the C1 control CSI (U+009B) in UTF-8.
var rawControls = []string{"\x1b", "\x07", "\x7f", "\xc2\x9b"}

// checkNoRawControls fails when out holds any of rawControls.
func checkNoRawControls(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range rawControls {
		if strings.Contains(out, c) {
			t.Errorf("%s prints the control %q raw: %q", what, c, out)
		}
	}
}

// TestAgentTextCannotDriveTheTerminal: a hypothesis file and an agent's
// claim statement holding terminal escapes (an OSC that sets the window
// title, a colour, BEL, DEL, the C1 CSI) are printed by status, status
// --json, watch and watch --jsonl with every control made visible or
// escaped, and an error quoting a campaign path does the same.
func TestAgentTextCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	const evil = "Energy within 1 % \x1b[31mRED\x1b]0;pwned\x07 del\x7f csi\u009b2J"
	c := newCampaign(t, "selfpause")
	writeFile(t, c.hypothesis, evil+"\n")
	if r := sj(t, "", c.args(120, 60)...); r.code != 0 {
		t.Fatalf("creating a paused study: %s", r)
	}
	commit := `{"statement":"repair \u001b]0;owned\u0007 \u009b31m \u007f claim","parent":"root","rationale":"the agent's words"}`
	if r := sj(t, commit, "lab", "commit", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("lab commit: %s", r)
	}
	for _, args := range [][]string{
		{"status", "--campaign", c.dir},
		{"status", "--campaign", c.dir, "--json"},
		{"watch", "--campaign", c.dir},
		{"watch", "--campaign", c.dir, "--jsonl"},
	} {
		r := sj(t, "", args...)
		if r.code != 0 {
			t.Fatalf("%v: %s", args, r)
		}
		checkNoRawControls(t, strings.Join(args, " "), r.stdout+r.stderr)
		if !strings.Contains(r.stdout, "owned") {
			t.Errorf("%v does not show the agent's claim: %s", args, r)
		}
	}
	text := sj(t, "", "status", "--campaign", c.dir).stdout
	for _, want := range []string{`\x1b[31mRED\x1b]0;pwned\x07`, `\u009b2J`, `\x7f`} {
		if !strings.Contains(text, want) {
			t.Errorf("status text does not show the escape as %s: %s", want, text)
		}
	}
	bad := filepath.Join(t.TempDir(), "x\x1b]0;title\x07")
	r := sj(t, "", "status", "--campaign", bad)
	checkNoRawControls(t, "an error quoting the campaign path", r.stderr)
	if !strings.Contains(r.stderr, `\x1b]0;title\x07`) {
		t.Errorf("the error does not show the path's escapes: %s", r)
	}
}

// TestOperatorFilesMustBeText: a hypothesis or instructions file that is
// not UTF-8, holds NUL bytes or passes its bound (64 KiB, 256 KiB) is
// refused with exit 2, one line naming the flag, and nothing written.
func TestOperatorFilesMustBeText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, flag string
		content    []byte
		want       string
	}{
		{"binary hypothesis", "--hypothesis-file", []byte("energy \xff\xfe within 1 %\n"), "is not UTF-8 text"},
		{"NUL in the instructions", "--instructions-file", []byte("run it\x00\n"), "holds NUL bytes"},
		{"huge hypothesis", "--hypothesis-file", bytes.Repeat([]byte("energy within 1 % "), 4000), "is larger than 64 KiB"},
		{"huge instructions", "--instructions-file", bytes.Repeat([]byte("check it "), 30000), "is larger than 256 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, tmp := scratchCampaign(t)
			path := c.hypothesis
			if tt.flag == "--instructions-file" {
				path = c.instructions
			}
			if err := os.WriteFile(path, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			before := fingerprint(t, tmp)
			r := sjWith(t, scratchEnv(tmp), "", studyArgs(c, "--backend", "scripted")...)
			checkInvalid(t, r, tt.flag+": ")
			checkInvalid(t, r, tt.want)
			if after := fingerprint(t, tmp); after != before {
				t.Errorf("%s changed although the input was refused:\nbefore:\n%s\nafter:\n%s", tmp, before, after)
			}
		})
	}
	t.Run("within the bounds", func(t *testing.T) {
		t.Parallel()
		c := newCampaign(t, "selfpause")
		ins, err := os.ReadFile(c.instructions)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, c.instructions, string(ins)+strings.Repeat("check it ", 25000)+"\n")
		if r := sj(t, "", c.args(120, 60)...); r.code != 0 {
			t.Errorf("225 KiB of instructions: want the study to run, got %s", r)
		}
	})
}

// TestInputJSONInOurWords: malformed JSON given to lab on stdin, and a grade
// report file that is empty or of the wrong shape, are refused in the
// program's words naming the input and the position, never the Go
// decoder's ("invalid character", "unexpected end of JSON input").
func TestInputJSONInOurWords(t *testing.T) {
	t.Parallel()
	c := pausedStudy(t)
	tmp := t.TempDir()
	empty, wrong := filepath.Join(tmp, "empty.txt"), filepath.Join(tmp, "wrong.json")
	writeFile(t, empty, "\n")
	writeFile(t, wrong, `{"task": 3}`)
	tests := []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"lab with a bad literal", "nol", []string{"lab", "status", "--campaign", c.dir}, 1,
			"lab status: stdin is not a JSON object: not valid JSON at line 1, column 2 (byte 2)"},
		{"lab cut short", `{"limit": 3`, []string{"lab", "status", "--campaign", c.dir}, 1,
			"stdin is not a JSON object: the JSON ends before its value is complete"},
		{"leaderboard of an empty file", "", []string{"bench", "leaderboard", "--reports", empty}, 2,
			"--reports " + empty + ": not grade reports: it is empty"},
		{"leaderboard of a wrong shape", "", []string{"bench", "leaderboard", "--reports", wrong}, 2,
			"not grade reports: task must be a string, not a JSON number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := sj(t, tt.stdin, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Errorf("want exit %d saying %q, got %s", tt.code, tt.want, r)
			}
			for _, goText := range []string{"invalid character", "unexpected end of JSON input", "Go value", "Go struct"} {
				if strings.Contains(r.stdout+r.stderr, goText) {
					t.Errorf("decoder text %q reached the user: %s", goText, r)
				}
			}
		})
	}
}
