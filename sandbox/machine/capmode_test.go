package machine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapabilityModeShipped: a runtime file's executable bit changed on
// this host after a ship (the hash unchanged) is not "already on the
// worker": the re-ship sends no content, sets the bit on the worker (in the
// folder a running job holds too) and says so; the next ship copies
// nothing. A runtime changed on the worker is re-made from the blobs it
// kept, with nothing sent.
func TestCapabilityModeShipped(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		held   bool // a running job holds the version
		change func(t *testing.T, c Capability, worker string)
		rel    string // the file to check on the worker
		exec   bool   // want it executable there
		modes  int
	}{
		{"chmod +x of a helper", false, func(t *testing.T, c Capability, _ string) {
			chmod(t, filepath.Join(c.Runtime, "share", "note.txt"), 0o755)
		}, "share/note.txt", true, 1},
		{"chmod -x of the tool", false, func(t *testing.T, c Capability, _ string) {
			chmod(t, filepath.Join(c.Runtime, "bin", "tool"), 0o644)
		}, "bin/tool", false, 1},
		{"chmod +x while a job holds it", true, func(t *testing.T, c Capability, _ string) {
			chmod(t, filepath.Join(c.Runtime, "share", "note.txt"), 0o755)
		}, "share/note.txt", true, 1},
		{"content changed on the worker", false, func(t *testing.T, _ Capability, worker string) {
			writeTestFile(t, filepath.Join(worker, "share", "note.txt"), "tampered\n", 0o644)
		}, "share/note.txt", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newTestWorker(t, 60e9)
			c := testCapability(t, w.dir, "tool")
			ctx := context.Background()
			if _, err := shipOne(ctx, w.m.sess, c); err != nil {
				t.Fatal(err)
			}
			if tc.held {
				_, release, err := w.d.runtimeFor(*capSpec(w, c).Capability)
				if err != nil {
					t.Fatal(err)
				}
				defer release()
			}
			worker := w.d.capRuntime("tool", c.Hash)
			tc.change(t, c, worker)
			rep, err := shipOne(ctx, w.m.sess, c)
			if err != nil || !rep.Copied || rep.Sent != 0 || rep.Modes != tc.modes {
				t.Fatalf("re-ship = %+v (%s), %v; want installed, nothing sent, %d modes", rep, rep, err, tc.modes)
			}
			if tc.modes > 0 && !strings.Contains(rep.String(), "executable bit of 1 files set as on this host") {
				t.Errorf("the line %q does not say the mode was set", rep)
			}
			st, err := os.Stat(filepath.Join(worker, filepath.FromSlash(tc.rel)))
			if err != nil || (st.Mode().Perm()&0o100 != 0) != tc.exec {
				t.Errorf("worker's %s: %v, %v; want executable %v", tc.rel, st.Mode(), err, tc.exec)
			}
			if again, err := shipOne(ctx, w.m.sess, c); err != nil || again.Copied {
				t.Errorf("third ship = %+v, %v; want nothing copied", again, err)
			}
			if got := w.d.capabilities(); got["tool"] != c.Hash {
				t.Errorf("installed %v, want tool → %s", got, c.Hash)
			}
		})
	}
}

func chmod(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}
