package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// createRaceRounds is how many times TestTwoStudiesOnOneMissingFolder races
// two creations.
const createRaceRounds = 10

// loserMessages are the one-line refusals of the `study` that loses the
// race: the winner holds the lock, or the winner's study exists (and, once
// it ended, cannot be resumed).
var loserMessages = []string{"another supervisor owns this study", "already holds a study", "cannot be resumed"}

// TestTwoStudiesOnOneMissingFolder starts two `study` commands back to
// back on one missing folder, createRaceRounds times, with an agent that
// cancels the study in its first turn: exactly one succeeds, the other
// exits 2 with one line, and the campaign holds the winner's study, whole
// (status cancelled, verify exit 0).
func TestTwoStudiesOnOneMissingFolder(t *testing.T) {
	t.Parallel()
	seen := map[string]int{}
	for i := range createRaceRounds {
		k := newKillStudy(t)
		writeFile(t, filepath.Join(filepath.Dir(k.exe), "stop"), "")
		a, b := start(t, k.args()...), start(t, k.args()...)
		ra, rb := a.wait(t, time.Minute), b.wait(t, time.Minute)
		won, lost := ra, rb
		if ra.code != 0 {
			won, lost = rb, ra
		}
		if won.code != 0 || lost.code != 2 {
			t.Fatalf("round %d: want one exit 0 and one exit 2, got\n%s\n---\n%s", i, ra, rb)
		}
		seen[checkLoserLine(t, i, lost.stderr)]++
		if s := status(t, k.dir); s.Status != "cancelled" {
			t.Fatalf("round %d: the winner's study is %q, want cancelled", i, s.Status)
		}
		if r := sj(t, "", "verify", "--campaign", k.dir); r.code != 0 {
			t.Fatalf("round %d: verify: want exit 0, got %s", i, r)
		}
	}
	t.Logf("%d rounds, the loser was told: %v", createRaceRounds, seen)
}

// checkLoserLine checks that the loser printed one line, naming why, and
// returns the reason it gave.
func checkLoserLine(t *testing.T, round int, stderr string) string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("round %d: the loser printed %d lines, want 1:\n%s", round, len(lines), stderr)
	}
	for _, m := range loserMessages {
		if strings.Contains(lines[0], m) {
			return m
		}
	}
	t.Fatalf("round %d: the loser said %q, want one of %q", round, lines[0], loserMessages)
	return ""
}
