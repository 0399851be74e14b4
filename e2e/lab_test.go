package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// labReply is the one JSON object `simjecture lab CALL` prints.
type labReply struct {
	OK     *bool           `json:"ok"`
	Error  string          `json:"error"`
	Result json.RawMessage `json:"result"`
}

// lab runs `simjecture lab CALL --campaign DIR` with stdin and decodes the
// single line it must print.
func lab(t *testing.T, dir, call, stdin string) (labReply, result) {
	t.Helper()
	r := sj(t, stdin, "lab", call, "--campaign", dir)
	out := lines(r.stdout)
	if len(out) != 1 {
		t.Fatalf("lab %s: want exactly one line on stdout, got %s", call, r)
	}
	var rep labReply
	if err := json.Unmarshal([]byte(out[0]), &rep); err != nil || rep.OK == nil {
		t.Fatalf("lab %s: stdout is not a {\"ok\": ...} object (%v): %s", call, err, r)
	}
	return rep, r
}

// labStudy is a paused study with files that tempt the lab to leave
// research/: a file beside research/, one outside the campaign, a symlink
// to it and a symlinked folder.
type labStudy struct {
	campaign
	outsideAbs string // absolute path of a program outside the campaign
	secret     string // text only the outside programs contain
}

func newLabStudy(t *testing.T) labStudy {
	t.Helper()
	s := labStudy{campaign: pausedStudy(t), secret: "outside-" + randomHex(t)}
	research := filepath.Join(s.dir, "research")
	elsewhere := t.TempDir()
	s.outsideAbs = filepath.Join(elsewhere, "outside.py")
	program := "print('" + s.secret + "')\n"
	writeFile(t, filepath.Join(research, "sim.py"), "print('inside')\n")
	writeFile(t, filepath.Join(s.dir, "outside.py"), program)
	writeFile(t, s.outsideAbs, program)
	for link, target := range map[string]string{"link.py": s.outsideAbs, "sub": elsewhere} {
		if err := os.Symlink(target, filepath.Join(research, link)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestLabRejects sends lab requests that must be refused with exit 1 and a
// one-line {"ok": false, "error": ...}, recording no experiment; then checks
// that run is idempotent and that a changed request is a new experiment.
func TestLabRejects(t *testing.T) {
	t.Parallel()
	s := newLabStudy(t)
	tests := []struct{ name, call, stdin string }{
		{"source leaves research via ..", "run", `{"source":"../outside.py","outputs":["r.json"]}`},
		{"absolute source", "run", `{"source":"` + s.outsideAbs + `","outputs":["r.json"]}`},
		{"source is a symlink to outside", "run", `{"source":"link.py","outputs":["r.json"]}`},
		{"source under a symlinked folder", "run", `{"source":"sub/outside.py","outputs":["r.json"]}`},
		{"input leaves research via ..", "run", `{"source":"sim.py","inputs":["../outside.py"],"outputs":["r.json"]}`},
		{"input is a symlink to outside", "run", `{"source":"sim.py","inputs":["link.py"],"outputs":["r.json"]}`},
		{"output with ..", "run", `{"source":"sim.py","outputs":["../r.json"]}`},
		{"output climbing out of a subfolder", "run", `{"source":"sim.py","outputs":["out/../../r.json"]}`},
		{"absolute output", "run", `{"source":"sim.py","outputs":["/tmp/r.json"]}`},
		{"no outputs", "run", `{"source":"sim.py","outputs":[]}`},
		{"NUL in an argument", "run", `{"source":"sim.py","args":["--n","1\u00002"],"outputs":["r.json"]}`},
		{"NUL in the source", "run", `{"source":"sim.py\u0000x","outputs":["r.json"]}`},
		{"unknown lab call", "frobnicate", `{}`},
		{"malformed JSON", "run", `{"source":"sim.py","outputs":["r.json"]`},
		{"not an object", "run", `["sim.py"]`},
		{"unknown argument key", "run", `{"source":"sim.py","outputs":["r.json"],"shell":"rm -rf /"}`},
		{"argument of the wrong type", "run", `{"source":"sim.py","outputs":"r.json"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(status(t, s.dir).Experiments)
			rep, r := lab(t, s.dir, tt.call, tt.stdin)
			if r.code != 1 || *rep.OK || strings.TrimSpace(rep.Error) == "" || len(rep.Result) != 0 {
				t.Errorf("want exit 1 and {\"ok\":false,\"error\":\"...\"}, got %s", r)
			}
			if after := len(status(t, s.dir).Experiments); after != before {
				t.Errorf("a refused request changed the number of experiments from %d to %d", before, after)
			}
		})
	}
	t.Run("nothing from outside was copied in", func(t *testing.T) {
		beside := filepath.Join(s.dir, "outside.py") // put there by the test
		if found := filesContaining(t, s.dir, s.secret, beside); len(found) > 0 {
			t.Errorf("the campaign holds copies of the outside program: %v", found)
		}
	})
	t.Run("idempotent run", func(t *testing.T) { testIdempotentRun(t, s.dir) })
}

var experimentID = regexp.MustCompile(`^exp_[0-9a-f]{24}$`)

// testIdempotentRun sends the same run twice (one experiment), then
// requests that differ in an argument, the key, the stage or the source's
// content (a new experiment each).
func testIdempotentRun(t *testing.T, dir string) {
	run := func(change map[string]any) string {
		t.Helper()
		req := map[string]any{"source": "sim.py", "args": []string{"--n", "10"}, "outputs": []string{"r.json"}}
		for k, v := range change {
			req[k] = v
		}
		b, _ := json.Marshal(req)
		rep, r := lab(t, dir, "run", string(b))
		var rec receipt
		if r.code != 0 || !*rep.OK || json.Unmarshal(rep.Result, &rec) != nil {
			t.Fatalf("lab run %s: want exit 0 and a receipt, got %s", b, r)
		}
		if !experimentID.MatchString(rec.ID) || rec.Status != "queued" {
			t.Errorf("lab run %s: receipt id %q status %q, want exp_ + 24 hex digits, queued", b, rec.ID, rec.Status)
		}
		return rec.ID
	}
	before := len(status(t, dir).Experiments)
	first := run(nil)
	if again := run(nil); again != first {
		t.Errorf("the same run request twice gave %s and %s, want one experiment", first, again)
	}
	if n := len(status(t, dir).Experiments) - before; n != 1 {
		t.Errorf("two identical run requests recorded %d experiments, want 1", n)
	}
	ids := map[string]string{first: "the first request"}
	changes := []struct {
		what   string
		change map[string]any
	}{
		{"a changed argument", map[string]any{"args": []string{"--n", "11"}}},
		{"a replicate key", map[string]any{"key": "replicate-2"}},
		{"the exploration stage", map[string]any{"stage": "exploration"}},
	}
	for _, ch := range changes {
		id := run(ch.change)
		if prev, seen := ids[id]; seen {
			t.Errorf("%s gave experiment %s, the same as %s", ch.what, id, prev)
		}
		ids[id] = ch.what
	}
	writeFile(t, filepath.Join(dir, "research", "sim.py"), "print('inside, changed')\n")
	if id := run(nil); ids[id] != "" {
		t.Errorf("a changed source gave experiment %s, the same as %s", id, ids[id])
	}
	if n := len(status(t, dir).Experiments) - before; n != 5 {
		t.Errorf("five distinct run requests recorded %d experiments, want 5", n)
	}
}

// filesContaining lists the regular files under dir other than skip
// (symlinks not followed) whose content contains text.
func filesContaining(t *testing.T, dir, text, skip string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || p == skip {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(text)) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
