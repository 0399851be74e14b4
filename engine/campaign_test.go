package engine

import (
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
			err := checkNewCampaignDir(dir)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("checkNewCampaignDir = %v, want %q", err, tc.want)
			}
		})
	}
}
