package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// put writes a file under c's folder, making its folders.
func put(t *testing.T, c Campaign, rel, body string) {
	t.Helper()
	p := filepath.Join(c.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// leftBehind makes what a creation killed just before its rename leaves.
func leftBehind(t *testing.T, c Campaign) {
	t.Helper()
	for _, d := range []string{c.Operator(), c.Research(), c.Experiments(), c.Supervisor()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mark(t, c, map[string]string{"operator/hypothesis.txt": "an old hypothesis", "operator/instructions.txt": "old instructions"})
	put(t, c, ".simjecture.lock", "")
	put(t, c, tempStoreName+"-journal", "")
	s, err := store.Open(context.Background(), filepath.Join(c.Dir, tempStoreName))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
}

// mark writes c's creation marker for files (path → content), then the
// files, as a creation does.
func mark(t *testing.T, c Campaign, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	planned := map[string][]byte{}
	for rel, body := range files {
		planned[rel] = []byte(body)
	}
	if err := writeCreationMarker(c, planned); err != nil {
		t.Fatal(err)
	}
	for rel, body := range files {
		put(t, c, rel, body)
	}
}

// reportsLeft writes the first reports a creation lists in its marker
// (with the operator's files of leftBehind), and the files named.
func reportsLeft(t *testing.T, c Campaign, names ...string) {
	t.Helper()
	planned := map[string][]byte{"operator/hypothesis.txt": []byte("an old hypothesis"),
		"operator/instructions.txt": []byte("old instructions"),
		"report.json":               []byte("{}\n"), "LEDGER.md": []byte("# Study ledger\n")}
	partial := []string{firstReportPrefix + "report.json", firstReportPrefix + "LEDGER.md"}
	if err := writeCreationMarker(c, planned, partial...); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		put(t, c, n, string(planned[n]))
	}
}

// oldBlankStore makes the store a creation before the temporary store
// left when killed before its study row: simjecture.db with no study.
func oldBlankStore(t *testing.T, c Campaign, record func(*store.Tx) error) {
	t.Helper()
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(context.Background(), c.DB())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if record != nil {
		if err := s.Tx(context.Background(), record); err != nil {
			t.Fatal(err)
		}
	}
}

// killedStore leaves in c a store whose writer was killed after its
// migrations: simjecture.db with its -wal and -shm, copied while open.
func killedStore(t *testing.T, c Campaign) {
	t.Helper()
	src := filepath.Join(t.TempDir(), storeName)
	s, err := store.Open(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, suf := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(src + suf)
		if err != nil {
			t.Fatal(err)
		}
		put(t, c, storeName+suf, string(b))
	}
}

// TestInterruptedCreation: a folder holding only what an interrupted
// creation leaves reads as interrupted, and a new study is created in it;
// anything else in it (or a store that recorded something) is refused and
// left untouched.
func TestInterruptedCreation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		setup   func(*testing.T, Campaign)
		refused string // "": the folder is an interrupted creation
		kept    string // with refused: a file that must survive
	}{
		{"temporary store and folders", leftBehind, "", ""},
		{"continuation snapshot", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			mark(t, c, map[string]string{"operator/hypothesis.txt": "an old hypothesis", "operator/instructions.txt": "old instructions",
				"operator/continuation/files/a/b.txt": "x", "research/inherited/a/b.txt": "x"})
		}, "", ""},
		{"a user's file among the inherited ones", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, "research/inherited/precious-results.csv", "1,2,3")
		}, "non-empty folder", "research/inherited/precious-results.csv"},
		{"a hypothesis rewritten after the interruption", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, "operator/hypothesis.txt", "my draft, not the creation's")
		}, "non-empty folder", "operator/hypothesis.txt"},
		{"a user's folder with no marker and no store", func(t *testing.T, c Campaign) {
			put(t, c, "operator/hypothesis.txt", "my draft")
			put(t, c, "research/inherited/precious-results.csv", "1,2,3")
		}, "non-empty folder", "research/inherited/precious-results.csv"},
		{"first reports, one cut short", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			reportsLeft(t, c, "report.json")
			put(t, c, firstReportPrefix+"LEDGER.md", "# Study led")
		}, "", ""},
		{"a hypothesis cut short", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			_ = os.Remove(filepath.Join(c.Operator(), "hypothesis.txt"))
			put(t, c, "operator/hypothesis.txt"+partialSuffix, "an old hyp") // killed while written
		}, "", ""},
		{"a partial file of something not listed", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, "research/mine.txt"+partialSuffix, "x")
		}, "non-empty folder", "research/mine.txt" + partialSuffix},
		{"the first marker being written", func(t *testing.T, c Campaign) {
			put(t, c, ".simjecture.lock", "")
			put(t, c, creationMarker+".new", `{"operator/hyp`) // killed before its rename
		}, "", ""},
		{"a marker being rewritten", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, creationMarker+".new", `{"report.json":`) // killed before its rename
		}, "", ""},
		{"a report edited since", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			reportsLeft(t, c, "report.json", "LEDGER.md")
			put(t, c, "LEDGER.md", "my own notes")
		}, "non-empty folder", "LEDGER.md"},
		{"old blank store", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			oldBlankStore(t, c, nil)
			put(t, c, storeName+"-shm", "")
		}, "", ""},
		{"old empty store file", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, storeName, "")
		}, "", ""},
		{"old store killed with its log", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			killedStore(t, c)
		}, "", ""},
		{"a store file that is not a store", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, storeName, "x")
		}, "already holds a study", storeName},
		{"old store with an event", func(t *testing.T, c Campaign) {
			oldBlankStore(t, c, func(tx *store.Tx) error { return appendEvent(tx, StudyCreatedPayload{Contract{}}) })
		}, "already holds a study", storeName},
		{"a user's file in research", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, "research/notes.txt", "mine")
		}, "non-empty folder that holds no study", "research/notes.txt"},
		{"a file in experiments", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, "experiments/exp_1/stdout.log", "")
		}, "non-empty folder", "experiments/exp_1/stdout.log"},
		{"an unknown file", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, "thesis.tex", "")
		}, "non-empty folder", "thesis.tex"},
		{"a symlinked hypothesis", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			p := filepath.Join(c.Operator(), "hypothesis.txt")
			_ = os.Remove(p)
			if err := os.Symlink("/etc/hostname", p); err != nil {
				t.Fatal(err)
			}
		}, "non-empty folder", "operator/instructions.txt"},
		{"a symlink in the inherited files", func(t *testing.T, c Campaign) {
			leftBehind(t, c)
			put(t, c, "research/inherited/a.txt", "x")
			if err := os.Symlink("/etc", filepath.Join(c.Research(), "inherited", "etc")); err != nil {
				t.Fatal(err)
			}
		}, "non-empty folder", "research/inherited/a.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkInterrupted(t, tc.setup, tc.refused, tc.kept)
		})
	}
}

func checkInterrupted(t *testing.T, setup func(*testing.T, Campaign), refused, kept string) {
	ctx := context.Background()
	dir := t.TempDir()
	c := Campaign{Dir: filepath.Join(dir, "c")}
	setup(t, c)
	before := readKept(t, c, kept)
	_, err := c.Open(ctx)
	if interrupted := errors.Is(err, ErrCreationInterrupted); interrupted != (refused == "") {
		t.Fatalf("Open = %v; want ErrCreationInterrupted: %v", err, refused == "")
	}
	req := Request{HypothesisFile: filepath.Join(dir, "h.txt"), InstructionsFile: filepath.Join(dir, "i.txt"),
		Mode: "minimal", AgentBackend: "command", Executable: "/bin/true", ExecutionBackend: "bubblewrap",
		CompletionPolicy: "repair", WallSeconds: 600, TurnSeconds: 60}
	for _, p := range []string{req.HypothesisFile, req.InstructionsFile} {
		if err := os.WriteFile(p, []byte("new text"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = CreateStudy(ctx, c, req, fakeProbe)
	if refused != "" {
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), refused) {
			t.Fatalf("CreateStudy = %v; want an invalid-input error containing %q", err, refused)
		}
		if after := readKept(t, c, kept); after != before {
			t.Errorf("a refused creation changed %s: %q, was %q", kept, after, before)
		}
		return
	}
	if err != nil {
		t.Fatalf("CreateStudy on an interrupted creation: %v", err)
	}
	checkCreated(t, c)
}

// readKept is the content of a file that must survive (a symlink's
// target name), "" for none.
func readKept(t *testing.T, c Campaign, rel string) string {
	t.Helper()
	if rel == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(c.Dir, rel))
	if err != nil {
		return "missing: " + err.Error()
	}
	return string(b)
}

// checkCreated: the store came whole (no write-ahead log beside it before
// anything opened it), the study opens, holds the new hypothesis, and no
// temporary store or old continuation file is left.
func checkCreated(t *testing.T, c Campaign) {
	ctx := context.Background()
	if _, err := os.Lstat(c.DB() + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the new store has a write-ahead log beside it (%v)", err)
	}
	s, err := c.Open(ctx)
	if err != nil {
		t.Fatalf("open the created study: %v", err)
	}
	defer s.Close()
	if _, err := LoadContract(ctx, s); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(c.Operator(), "hypothesis.txt")); string(b) != "new text" {
		t.Errorf("hypothesis.txt = %q, want the new study's", b)
	}
	for _, rel := range []string{tempStoreName, tempStoreName + "-journal", tempStoreName + "-wal", tempStoreName + "-shm", "operator/continuation", "research/inherited"} {
		if _, err := os.Lstat(filepath.Join(c.Dir, rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after the creation (%v)", rel, err)
		}
	}
}
