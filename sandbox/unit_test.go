package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTranslator(t *testing.T) {
	s := Spec{ReadOnly: []Mount{{Host: "/srv/cap", Virtual: "/opt/cap"}, {Host: "/srv/capx", Virtual: "/opt/cap/x"}}}
	tr := newTranslator(s, newLayout("/run/r"))
	cases := []struct{ in, path, value string }{
		{"/work", "/run/r/work", "/run/r/work"},
		{"/work/sim.py", "/run/r/work/sim.py", "/run/r/work/sim.py"},
		{"/workshop", "/workshop", "/workshop"},
		{"/tmp/a:/work/b", "/run/r/tmp/a:/work/b", "/run/r/tmp/a:/run/r/work/b"},
		{"/opt/cap/x/bin", "/srv/capx/bin", "/srv/capx/bin"},
		{"/opt/cap/bin", "/srv/cap/bin", "/srv/cap/bin"},
		{"print('/work')", "print('/work')", "print('/work')"},
	}
	for _, c := range cases {
		if got := tr.path(c.in); got != c.path {
			t.Errorf("path(%q) = %q, want %q", c.in, got, c.path)
		}
		if got := tr.value(c.in); got != c.value {
			t.Errorf("value(%q) = %q, want %q", c.in, got, c.value)
		}
	}
}

func TestHeadTail(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		size, half int
		truncated  bool
	}{{0, 4, false}, {8, 4, false}, {9, 4, true}, {100, 4, true}}
	for _, c := range cases {
		p := filepath.Join(dir, "log")
		must(t, os.WriteFile(p, []byte(strings.Repeat("x", c.size)), 0o644))
		got, err := headTail(p, int64(c.half))
		must(t, err)
		if strings.Contains(string(got), "truncated") != c.truncated {
			t.Errorf("size %d half %d: %q", c.size, c.half, got)
		}
		if c.truncated && !strings.Contains(string(got), "… "+itoa(c.size-2*c.half)+" bytes truncated …") {
			t.Errorf("size %d: marker %q", c.size, got)
		}
	}
	if b, err := headTail(filepath.Join(dir, "absent"), 4); err != nil || len(b) != 0 {
		t.Errorf("absent log: %q %v", b, err)
	}
	// Cuts inside a multi-byte character move off it: no U+FFFD in the
	// tails, and the marker counts what was left out.
	for _, body := range []string{"aé" + strings.Repeat("x", 20) + "éb", "a€" + strings.Repeat("€", 9) + "€b", "😀😀" + strings.Repeat("y", 30) + "😀😀"} {
		p := filepath.Join(dir, "utf8")
		must(t, os.WriteFile(p, []byte(body), 0o644))
		for half := 1; half <= 6; half++ {
			got, err := headTail(p, int64(half))
			must(t, err)
			head, rest, _ := strings.Cut(string(got), "\n… ")
			n, tail, _ := strings.Cut(rest, " bytes truncated …\n")
			if !utf8.ValidString(string(got)) || len(head)+len(tail)+atoiT(t, n) != len(body) {
				t.Errorf("half %d of %q: %q", half, body, got)
			}
		}
	}
}

func atoiT(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("marker count %q: %v", s, err)
	}
	return n
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestCleanRel(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{{"a", true}, {"a/b", true}, {"a/../b", true}, {"../a", false}, {"/a", false}, {"", false}, {".", false}, {"a\x00", false}}
	for _, c := range cases {
		if _, ok := cleanRel(c.in); ok != c.ok {
			t.Errorf("cleanRel(%q) ok=%v", c.in, ok)
		}
	}
}

func TestHashFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	must(t, os.WriteFile(p, []byte("abc"), 0o644))
	sum, n, err := HashFile(p)
	if err != nil || n != 3 || sum != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("HashFile = %s %d %v", sum, n, err)
	}
}

func TestHelperConfigRoundTrip(t *testing.T) {
	want := helperConfig{ParentPID: 7, Timeout: 1500 * time.Millisecond, Memory: 1 << 30, Workspace: 2 << 30,
		CPULimit: 31, FsizeLimit: 1 << 20, ASLimit: 1 << 40, ExitSignals: true, BwrapGate: true, ProotStatus: true,
		Watch: []string{"/w", "/t"}, Stdout: "/r/out", Stderr: "/r/err", Dir: "/w",
		Env: []string{"A=1", "B=x\ny"}, Argv: []string{"python3", "--", "-c", "print(1)"}}
	js, err := json.Marshal(runnerRequest{Op: "start", ID: 3, Config: &want})
	must(t, err)
	var req runnerRequest
	must(t, json.Unmarshal(js, &req))
	if req.Config == nil || !reflect.DeepEqual(*req.Config, want) {
		t.Fatalf("got %+v\nwant %+v", req.Config, want)
	}
	js, err = json.Marshal(want)
	must(t, err)
	got, err := oneShotConfig([]string{configArg, string(js)})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("one-shot: got %+v, %v", got, err)
	}
}

func TestHelperConfigRejected(t *testing.T) {
	ok := `"parent_pid":1,"timeout":10,"stdout":"o","stderr":"e"`
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no command", []string{configArg, "{" + ok + "}"}},
		{"empty command", []string{configArg, "{" + ok + `,"argv":[]}`}},
		{"not JSON", []string{configArg, "--parent-pid 1"}},
		{"bad number", []string{configArg, `{"memory":"lots",` + ok + `,"argv":["true"]}`}},
		{"no timeout", []string{configArg, `{"parent_pid":1,"stdout":"o","stderr":"e","argv":["true"]}`}},
		{"no config flag", []string{`{` + ok + `,"argv":["true"]}`}},
		{"no arguments", nil},
	} {
		if _, err := oneShotConfig(c.args); err == nil {
			t.Errorf("%s: accepted %q", c.name, c.args)
		}
	}
	good := []string{configArg, "{" + ok + `,"argv":["true"]}`}
	if _, err := oneShotConfig(good); err != nil {
		t.Errorf("a complete config was refused: %v", err)
	}
}
