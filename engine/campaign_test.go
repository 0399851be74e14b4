package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNewCampaignDirSaysWhatIsThere: a folder that holds a study is
// refused as one, not as "a folder that holds no study".
func TestCheckNewCampaignDirSaysWhatIsThere(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, want string
		setup      func(t *testing.T, dir string)
	}{
		{"missing", "", func(*testing.T, string) {}},
		{"empty", "", func(t *testing.T, dir string) { _ = os.Mkdir(dir, 0o755) }},
		{"study", "already holds a study", func(t *testing.T, dir string) { write(t, Campaign{Dir: dir}.DB()) }},
		{"other files", "holds no study", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "thesis.tex")) }},
		{"file", "is a file", func(t *testing.T, dir string) { write(t, dir) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "c")
			tc.setup(t, dir)
			err := checkNewCampaignDir(context.Background(), dir)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("checkNewCampaignDir = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestLoneLockFileIsNoStudy: a folder holding only the lock file is another
// creation caught between opening the lock file and taking the lock; the
// check leaves the decision to the lock (two `study` commands on one
// missing folder once both failed this way under load).
func TestLoneLockFileIsNoStudy(t *testing.T) {
	t.Parallel()
	c := Campaign{Dir: t.TempDir()}
	if err := os.WriteFile(c.LockFile(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkNewCampaignDir(context.Background(), c.Dir); err != nil {
		t.Errorf("a folder with only the lock file: %v, want no error", err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkNewCampaignDir(context.Background(), c.Dir); err == nil {
		t.Error("a folder with another file is accepted for a new study")
	}
}
