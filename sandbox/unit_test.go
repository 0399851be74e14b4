package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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

func TestHelperArgsRoundTrip(t *testing.T) {
	want := helperConfig{parentPID: 7, timeout: 1500 * time.Millisecond, memory: 1 << 30, workspace: 2 << 30,
		cpuLimit: 31, fsizeLimit: 1 << 20, asLimit: 1 << 40, exitSignals: true, bwrapGate: true,
		watch: []string{"/w", "/t"}, stdout: "/r/out", stderr: "/r/err", dir: "/w",
		env: []string{"A=1", "B=x\ny"}, argv: []string{"python3", "--", "-c", "print(1)"}}
	got, err := parseHelperArgs(want.args())
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v\nwant %+v", got, err, want)
	}
}

func TestHelperArgsRejected(t *testing.T) {
	ok := []string{"--parent-pid", "1", "--timeout-ms", "10", "--stdout", "o", "--stderr", "e"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no command", ok},
		{"empty command", append(ok, "--")},
		{"unknown flag", append([]string{"--nope", "1"}, append(ok, "--", "true")...)},
		{"missing value", []string{"--parent-pid"}},
		{"bad number", append([]string{"--memory", "lots"}, append(ok, "--", "true")...)},
		{"no timeout", []string{"--parent-pid", "1", "--stdout", "o", "--stderr", "e", "--", "true"}},
	} {
		if _, err := parseHelperArgs(c.args); err == nil {
			t.Errorf("%s: accepted %q", c.name, c.args)
		}
	}
}
