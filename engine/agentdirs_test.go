package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNewAgentDirNeverReusesAFolder: the log folder of a launch is made
// new; whatever holds its name (a folder an earlier attempt's agent
// filled with links, a symlink to the record) is renamed aside, never
// followed, and the record is untouched.
func TestNewAgentDirNeverReusesAFolder(t *testing.T) {
	cases := []struct {
		name      string
		plant     func(t *testing.T, dir, record string)
		wantAside string
	}{
		{"nothing there", func(*testing.T, string, string) {}, ""},
		{"a folder of links", func(t *testing.T, dir, record string) {
			must(t, os.Mkdir(dir, 0o755))
			must(t, os.Symlink(record, filepath.Join(dir, PacketFile)))
		}, ".interrupted-1"},
		{"a symlink to the record's folder", func(t *testing.T, dir, record string) {
			must(t, os.Symlink(filepath.Dir(record), dir))
		}, ".interrupted-1"},
		{"a folder set aside before", func(t *testing.T, dir, _ string) {
			must(t, os.Mkdir(dir, 0o755))
			must(t, os.Mkdir(dir+".interrupted-1", 0o755))
		}, ".interrupted-2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			record := filepath.Join(root, "study", "simjecture.db")
			must(t, os.MkdirAll(filepath.Dir(record), 0o755))
			must(t, os.WriteFile(record, []byte("the record"), 0o644))
			dir := filepath.Join(root, "supervisor", "review-rev_1-1")
			must(t, os.MkdirAll(filepath.Dir(dir), 0o755))
			c.plant(t, dir, record)
			if _, err := makeReviewFolder(dir, []byte(`{"packet":1}`)); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(record); string(b) != "the record" {
				t.Errorf("the record was written through a link: %q", b)
			}
			if st, err := os.Lstat(filepath.Join(dir, "work")); err != nil || !st.IsDir() {
				t.Errorf("the new folder has no real work/: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, PacketFile)); string(b) != `{"packet":1}` {
				t.Errorf("packet %q", b)
			}
			if c.wantAside != "" {
				if _, err := os.Lstat(dir + c.wantAside); err != nil {
					t.Errorf("the earlier folder was not set aside as %s: %v", c.wantAside, err)
				}
			}
		})
	}
}
