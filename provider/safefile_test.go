package provider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSafeFilesNeverFollowALink: what the supervisor makes or reads in a
// folder an agent could write refuses every name the agent may have left
// there (a symlink to the record, an existing file, a FIFO), and the
// record the link points to is untouched.
func TestSafeFilesNeverFollowALink(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "simjecture.db")
	if err := os.WriteFile(record, []byte("the record"), 0o644); err != nil {
		t.Fatal(err)
	}
	recordDir := filepath.Join(dir, "experiments")
	if err := os.Mkdir(recordDir, 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(name, to string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fileLink, dirLink := link("stdout.log", record), link("new-thread", recordDir)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		do   func() error
	}{
		{"CreateNew on a symlink", func() error { f, err := CreateNew(fileLink, 0o644); closeIf(f); return err }},
		{"CreateNew on an existing file", func() error { f, err := CreateNew(record, 0o644); closeIf(f); return err }},
		{"WriteNew on a symlink", func() error { return WriteNew(fileLink, []byte("forged"), 0o644) }},
		{"MakeNewDir on an existing folder", func() error { return MakeNewDir(recordDir) }},
		{"MakeNewDir on a symlink", func() error { return MakeNewDir(dirLink) }},
		{"EnsureDir on a symlink to a folder", func() error { return EnsureDir(dirLink, 0o755) }},
		{"EnsureDir on a file", func() error { return EnsureDir(record, 0o755) }},
		{"OpenNoFollow on a symlink", func() error { f, err := OpenNoFollow(fileLink); closeIf(f); return err }},
		{"OpenNoFollow on a FIFO", func() error { f, err := OpenNoFollow(fifo); closeIf(f); return err }},
		{"ReadBounded past its bound", func() error { _, err := ReadBounded(big, 99); return err }},
	}
	for _, c := range cases {
		if err := c.do(); err == nil {
			t.Errorf("%s: want a refusal, got none", c.name)
		}
	}
	if b, _ := os.ReadFile(record); string(b) != "the record" {
		t.Errorf("the record was written through a link: %q", b)
	}
	if ents, _ := os.ReadDir(recordDir); len(ents) != 0 {
		t.Errorf("something was made inside the linked folder: %v", ents)
	}
	if b, err := ReadBounded(big, 100); err != nil || len(b) != 100 {
		t.Errorf("ReadBounded at its bound: %d bytes, %v", len(b), err)
	}
	if err := EnsureDir(filepath.Join(dir, "real"), 0o755); err != nil || EnsureDir(filepath.Join(dir, "real"), 0o755) != nil {
		t.Errorf("EnsureDir of a new, then an existing real folder: %v", err)
	}
}

func closeIf(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}

// TestFreshSessionLogsBesideTheTurn: the retry in a new session logs into
// a new sibling of the turn's folder, never into what the failed attempt
// left in its own folder (a symlink named like the retry's folder, links
// named like the logs), and the Wrap of the retry is given that folder;
// a sibling that exists already is refused.
func TestFreshSessionLogsBesideTheTurn(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "experiment")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	turn := filepath.Join(root, "turn-00002")
	if err := os.Mkdir(turn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(turn, "new-thread")); err != nil {
		t.Fatal(err)
	}
	var wrapped []string
	tr := Turn{Role: RoleWorker, Prompt: "p", Dir: root, LogDir: turn, Timeout: time.Minute,
		Wrap: func(logDir string, argv []string) []string { wrapped = append(wrapped, logDir); return argv }}
	run := func(ctx context.Context, t Turn) (Outcome, error) {
		return RunLaunch(ctx, t, Launch{Executable: "sh", Args: []string{"-c", "echo fresh"}, Prompt: t.Prompt})
	}
	if _, err := InFreshSession(context.Background(), tr, time.Now(), Outcome{}, "note ", "new-thread", run); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("the retry wrote through the planted link: %v", ents)
	}
	out, err := os.ReadFile(filepath.Join(turn+"-new-thread", "stdout.log"))
	if err != nil || strings.TrimSpace(string(out)) != "fresh" {
		t.Errorf("the retry's stdout.log beside the turn: %q, %v", out, err)
	}
	if len(wrapped) != 1 || wrapped[0] != turn+"-new-thread" {
		t.Errorf("the retry was enclosed for %v, want its own folder", wrapped)
	}
	if _, err := InFreshSession(context.Background(), tr, time.Now(), Outcome{}, "", "new-thread", run); !errors.Is(err, ErrNotOurs) {
		t.Errorf("a second retry into the existing sibling: want ErrNotOurs, got %v", err)
	}
}

// TestLaunchRefusesPlantedLogs: a launch whose log folder already holds
// a name it would create (a symlink to the record) refuses to start, and
// the record stays as it was.
func TestLaunchRefusesPlantedLogs(t *testing.T) {
	for _, name := range []string{"prompt.txt", "stdout.log", "stderr.log"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			record := filepath.Join(root, "report.json")
			if err := os.WriteFile(record, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			logs := filepath.Join(root, "turn")
			if err := os.Mkdir(logs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(record, filepath.Join(logs, name)); err != nil {
				t.Fatal(err)
			}
			_, err := RunLaunch(context.Background(), Turn{Dir: root, LogDir: logs, Timeout: time.Minute},
				Launch{Executable: "sh", Args: []string{"-c", "echo forged; echo forged >&2"}, Prompt: "forged"})
			if !errors.Is(err, ErrNotOurs) {
				t.Errorf("want ErrNotOurs, got %v", err)
			}
			if b, _ := os.ReadFile(record); string(b) != "{}" {
				t.Errorf("the record was written through %s: %q", name, b)
			}
		})
	}
}
