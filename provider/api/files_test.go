package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileToolsStayInside(t *testing.T) {
	t.Parallel()
	study := t.TempDir()
	research := filepath.Join(study, "research")
	outside := t.TempDir()
	for _, d := range []string{research, filepath.Join(study, "experiments", "exp_1")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(study, "experiments", "exp_1", "out.txt"), []byte("42\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(study, "simjecture.db"), []byte("secret store"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(research, "escape")))
	f, err := openFileTools(research, study)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := []struct {
		tool, args string
		ok         bool
		want       string // in the result
	}{
		{"write_file", `{"path":"sub/a.py","content":"print(1)"}`, true, `"bytes":8`},
		{"write_file", `{"path":"research/b.py","content":"x"}`, true, `"path":"b.py"`},
		{"read_file", `{"path":"sub/a.py"}`, true, `print(1)`},
		{"read_file", `{"path":"experiments/exp_1/out.txt"}`, true, `42`},
		{"list_files", `{}`, true, `"sub/"`},
		{"list_files", `{"path":"experiments"}`, true, `exp_1/`},
		{"write_file", `{"path":"../x.py","content":"x"}`, false, "relative"},
		{"write_file", `{"path":"/tmp/x.py","content":"x"}`, false, "relative"},
		{"write_file", `{"path":"escape/x.py","content":"x"}`, false, ""},
		{"write_file", `{"path":"experiments/exp_1/out.txt","content":"tampered"}`, true, ""},
		{"read_file", `{"path":"../simjecture.db"}`, false, "relative"},
		{"read_file", `{"path":"experiments/../simjecture.db"}`, false, ""},
		{"write_file", `{"path":"a.py"}`, false, "content is required"},
	}
	for _, c := range cases {
		got := f.run(c.tool, []byte(c.args))
		var res struct {
			OK bool `json:"ok"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil || res.OK != c.ok || !strings.Contains(got, c.want) {
			t.Errorf("%s %s = %s; want ok=%v containing %q", c.tool, c.args, got, c.ok, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x.py")); err == nil {
		t.Error("write_file followed a symlink out of research/")
	}
	if b, _ := os.ReadFile(filepath.Join(study, "experiments", "exp_1", "out.txt")); string(b) != "42\n" {
		t.Errorf("write_file changed a collected artifact: %q", b)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
