package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The continue form's candidates follow the --inherit-file rules: allowed
// files with their sizes, refused entries with the rule's reason.
func TestContinuationDraftListsCandidates(t *testing.T) {
	c, _ := newTestStudy(t, func(r *Request) { r.Model = "m1" })
	for rel, body := range map[string]string{"notes.md": "# learnt\n", "sub/data.csv": "n\n3\n", ".secret": "s",
		".git/config": "x", "provider.json": "{}", "conn.json": `{"base_url":"x","api_key":"k"}`,
		"big.bin": strings.Repeat("x", MaxInheritFileBytes+1)} {
		writeResearch(t, c, rel, body, 0o644)
	}
	if err := os.Symlink("notes.md", filepath.Join(c.Research(), "link.md")); err != nil {
		t.Fatal(err)
	}
	v, err := OpenView(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	d, err := v.ContinuationDraft(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Parent != c.Dir || d.Request.ContinueFrom != c.Dir || d.Request.AgentBackend != "command" || d.Request.Model != "m1" ||
		d.Request.Executable == "" || d.Request.ExecutionBackend != "bubblewrap" || d.Truncated {
		t.Fatalf("draft request %+v (truncated %v); want the parent's contract and ContinueFrom", d.Request, d.Truncated)
	}
	want := map[string]string{ // path → a word of the reason ("" allowed)
		".git/": "hidden", ".secret": "hidden", "big.bin": "larger than", "conn.json": "api_key", "link.md": "symlink",
		"notes.md": "", "provider.json": "connection file", "sub/data.csv": "",
	}
	if len(d.Files) != len(want) {
		t.Fatalf("candidates %+v; want %d", d.Files, len(want))
	}
	for _, f := range d.Files {
		w, ok := want[f.Path]
		switch {
		case !ok:
			t.Errorf("unexpected candidate %+v", f)
		case w == "" && (f.Refused != "" || f.Bytes == 0):
			t.Errorf("%s: want allowed with its size, got %+v", f.Path, f)
		case w != "" && !strings.Contains(f.Refused, w):
			t.Errorf("%s: refused %q; want a reason saying %q", f.Path, f.Refused, w)
		}
	}
}
