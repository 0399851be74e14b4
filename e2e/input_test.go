package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestBadInput feeds `study`, `resume` and the command line invalid input:
// each must exit 2 with exactly one stderr line starting "simjecture: " and
// write nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup prepares the case in tmp and returns the command's arguments
		// and the path that must be left as it was.
		setup func(t *testing.T, tmp string) (args []string, untouched string)
		want  string // a substring of the error line, if any
	}{
		{name: "missing hypothesis file", setup: func(t *testing.T, tmp string) ([]string, string) {
			c := newCampaign(t, "cubes")
			c.hypothesis = filepath.Join(tmp, "no-such-hypothesis.txt")
			return c.args(60, 30), c.dir
		}, want: "no-such-hypothesis.txt"},
		{name: "empty hypothesis file", setup: func(t *testing.T, tmp string) ([]string, string) {
			c := newCampaign(t, "cubes")
			writeFile(t, c.hypothesis, "")
			return c.args(60, 30), c.dir
		}, want: "empty"},
		{name: "campaign is a file", setup: func(t *testing.T, tmp string) ([]string, string) {
			c := newCampaign(t, "cubes")
			writeFile(t, c.dir, "not a folder\n")
			return c.args(60, 30), c.dir
		}, want: "study"},
		{name: "campaign is a non-empty folder without a study", setup: func(t *testing.T, tmp string) ([]string, string) {
			c := newCampaign(t, "cubes")
			if err := os.MkdirAll(filepath.Join(c.dir, "notes"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(c.dir, "thesis.tex"), "\\documentclass{article}\n")
			writeFile(t, filepath.Join(c.dir, "notes", "todo.txt"), "keep me\n")
			return c.args(60, 30), c.dir
		}, want: "study"},
		{name: "turn longer than wall", setup: func(t *testing.T, tmp string) ([]string, string) {
			c := newCampaign(t, "cubes")
			return c.args(10, 20), c.dir
		}, want: "turn-seconds"},
		{name: "unknown execution backend", setup: func(t *testing.T, tmp string) ([]string, string) {
			c := newCampaign(t, "cubes")
			return c.args(60, 30, "--execution-backend", "chroot"), c.dir
		}, want: "chroot"},
		{name: "agent backend not in this build", setup: func(t *testing.T, tmp string) ([]string, string) {
			c := newCampaign(t, "cubes")
			return []string{"study", "--campaign", c.dir, "--hypothesis-file", c.hypothesis,
				"--instructions-file", c.instructions, "--batch"}, c.dir
		}, want: "codex"},
		{name: "resume of a folder without a study", setup: func(t *testing.T, tmp string) ([]string, string) {
			dir := filepath.Join(tmp, "empty")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{"resume", "--campaign", dir, "--batch"}, dir
		}, want: "empty"},
		{
			name: "changed execution backend",
			setup: func(t *testing.T, tmp string) ([]string, string) {
				c := pausedStudy(t)
				return c.args(120, 60, "--execution-backend", "proot-cooperative"), c.dir
			},
			want: "execution backend is immutable within a study: recorded bubblewrap, requested proot-cooperative",
		},
		{
			name: "changed completion policy",
			setup: func(t *testing.T, tmp string) ([]string, string) {
				c := pausedStudy(t)
				return c.args(120, 60, "--completion-policy", "answer"), c.dir
			},
			want: "completion policy is immutable within a study: recorded repair, requested answer",
		},
		{
			name: "changed completion policy on resume without other flags",
			setup: func(t *testing.T, tmp string) ([]string, string) {
				c := pausedStudy(t)
				return []string{"study", "--campaign", c.dir, "--completion-policy", "answer", "--batch"}, c.dir
			},
			want: "completion policy is immutable",
		},
		{name: "unknown command", setup: func(t *testing.T, tmp string) ([]string, string) {
			return []string{"frobnicate", "--campaign", filepath.Join(tmp, "x")}, filepath.Join(tmp, "x")
		}, want: "frobnicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args, untouched := tt.setup(t, t.TempDir())
			before := fingerprint(t, untouched)
			r := sj(t, "", args...)
			t.Logf("%s", strings.TrimSpace(r.stderr))
			checkInvalid(t, r, tt.want)
			if after := fingerprint(t, untouched); after != before {
				t.Errorf("%s changed although the input was refused:\nbefore:\n%s\nafter:\n%s", untouched, before, after)
			}
		})
	}
	t.Run("second supervisor", func(t *testing.T) {
		t.Parallel()
		testSecondSupervisor(t)
	})
}

// checkInvalid wants exit 2, nothing on stdout and one stderr line
// starting "simjecture: " (containing want).
func checkInvalid(t *testing.T, r result, want string) {
	t.Helper()
	errLines := lines(r.stderr)
	switch {
	case r.code != 2:
		t.Errorf("want exit 2, got %s", r)
	case len(errLines) != 1 || !strings.HasPrefix(errLines[0], "simjecture: "):
		t.Errorf("want exactly one stderr line starting %q, got %s", "simjecture: ", r)
	case !strings.Contains(r.stderr, want):
		t.Errorf("want the error to say %q, got %s", want, r)
	case strings.TrimSpace(r.stdout) != "":
		t.Errorf("want nothing on stdout, got %s", r)
	}
}

// testSecondSupervisor starts a study with a slow agent and then tries to
// supervise the same campaign again, with resume and with study.
func testSecondSupervisor(t *testing.T) {
	c := newCampaign(t, "busy", "e2e-seconds: 30")
	reapMarker(t, c.marker)
	sup := start(t, c.args(300, 120)...)
	t.Cleanup(func() {
		sj(t, "", "cancel", "--campaign", c.dir)
		sup.wait(t, 10*time.Second)
	})
	waitFor(t, 10*time.Second, "the study to run", func() bool {
		s, err := tryStatus(t, c.dir)
		return err == nil && s.Status == "running"
	})
	for _, args := range [][]string{
		{"resume", "--campaign", c.dir, "--batch"},
		c.args(300, 120),
	} {
		r := sj(t, "", args...)
		if r.code != 2 || len(lines(r.stderr)) != 1 {
			t.Errorf("%s while another supervisor owns the campaign: want exit 2 and one stderr line, got %s", args[0], r)
		}
	}
	if sup.exitedYet() {
		t.Errorf("the first supervisor stopped when a second one was refused:\n%s", sup.result())
	}
	if s := status(t, c.dir); s.Status != "running" {
		t.Errorf("status after the refused second supervisor = %q, want running", s.Status)
	}
}

// fingerprint describes path's tree: every entry's name, type and content
// hash. The store is a SQLite file whose header may legitimately change when
// it is merely opened, so it is described by `status --json` instead.
func fingerprint(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		switch {
		case d.IsDir():
			fmt.Fprintf(&b, "%s/\n", rel)
		case d.Name() == "simjecture.db":
			fmt.Fprintf(&b, "%s: %s\n", rel, statusFingerprint(t, path))
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&b, "%s %v %s\n", rel, d.Type(), hex.EncodeToString(sum[:]))
		}
		return nil
	})
	if os.IsNotExist(err) {
		return "(absent)"
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// statusFingerprint is the study snapshot without the fields that change
// with the clock.
func statusFingerprint(t *testing.T, dir string) string {
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		return "unreadable status: " + r.String()
	}
	delete(m, "remaining_seconds")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b, _ := json.Marshal(m)
	return fmt.Sprintf("%d keys, %x", len(keys), sha256.Sum256(b))
}

// TestHelp wants every command's --help to print its usage and exit 0
// (contract section 2: "Every command has --help").
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"study", "resume", "pause", "cancel", "status", "watch", "verify", "doctor", "demo"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			r := sj(t, "", cmd, "--help")
			out := r.stdout + r.stderr
			if r.code != 0 || !strings.Contains(out, "--") {
				t.Errorf("%s --help: want exit 0 and the flags, got %s", cmd, r)
			}
			for _, l := range lines(out) {
				if strings.HasPrefix(l, "simjecture: ") {
					t.Errorf("%s --help printed an error line %q", cmd, l)
				}
			}
		})
	}
	r := sj(t, "", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "study") {
		t.Errorf("simjecture --help: want exit 0 and the list of commands, got %s", r)
	}
}
