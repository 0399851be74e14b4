package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBenchOutputChecked: `bench grade` and `bench leaderboard` given an
// --output that is a folder (or not a regular file) refuse it before any
// work — exit 2, one line naming the flag — and leave no file anywhere
// (the grade used to run first and then fail its rename, leaving its
// temporary file in the folder above).
func TestBenchOutputChecked(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	trial := preparedTrial(t, tmp)
	report := filepath.Join(tmp, "grade.json")
	if r := sj(t, "", "bench", "grade", "kepler-energy", "--submission", trial, "--output", report); r.code != 0 {
		t.Fatalf("grading the honest submission: %s", r)
	}
	folder := filepath.Join(tmp, "out")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"grade into a folder", []string{"bench", "grade", "kepler-energy", "--submission", trial, "--output", folder}, "--output " + folder + ": is a folder"},
		{"grade into a device", []string{"bench", "grade", "kepler-energy", "--submission", trial, "--output", "/dev/null"}, "--output /dev/null: is not a regular file"},
		{"leaderboard into a folder", []string{"bench", "leaderboard", "--reports", report, "--output", folder}, "--output " + folder + ": is a folder"},
		{"grade into a missing folder", []string{"bench", "grade", "kepler-energy", "--submission", trial, "--output", filepath.Join(tmp, "no", "g.json")}, "its folder does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fingerprint(t, tmp)
			r := sj(t, "", tt.args...)
			checkInvalid(t, r, tt.want)
			if after := fingerprint(t, tmp); after != before {
				t.Errorf("%s changed although the output was refused:\nbefore:\n%s\nafter:\n%s", tmp, before, after)
			}
		})
	}
}
