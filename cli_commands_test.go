package main

import (
	"bytes"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestEveryCommandParsesAlike: every command accepts --help (exit 0,
// nothing on stdout) and refuses an unknown flag or a stray argument with
// exit 2 and one line on stderr. lab, the agent's interface, answers bad
// usage in its own shape instead: one JSON object on stdout, exit 1.
func TestEveryCommandParsesAlike(t *testing.T) {
	t.Parallel()
	positional := map[string][]string{"demo": {"DIR"}, "lab": {"run"}} // what a command may take
	for _, c := range commands() {
		stray := append(slices.Clone(positional[c.name]), "stray")
		cases := []struct {
			name string
			args []string
			code int
		}{
			{"help", []string{"--help"}, exitOK},
			{"unknown flag", []string{"--no-such-flag"}, exitInvalid},
			{"stray argument", stray, exitInvalid},
		}
		for _, tc := range cases {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				var out, errb bytes.Buffer
				code := c.run(t.Context(), tc.args, stdio{in: strings.NewReader("{}"), out: &out, err: &errb})
				switch {
				case tc.code == exitOK:
					checkHelp(t, code, out.String(), errb.String())
				case c.name == "lab":
					checkLabRefusal(t, code, out.String(), errb.String())
				default:
					checkRefusal(t, code, out.String(), errb.String())
				}
			})
		}
	}
}

func checkHelp(t *testing.T, code int, out, errOut string) {
	t.Helper()
	if code != exitOK || out != "" || !strings.Contains(errOut, "--") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, no stdout and the usage on stderr", code, out, errOut)
	}
}

func checkRefusal(t *testing.T, code int, out, errOut string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != exitInvalid || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "simjecture: ") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no stdout and one line on stderr", code, out, errOut)
	}
}

func checkLabRefusal(t *testing.T, code int, out, errOut string) {
	t.Helper()
	if code != exitAttention || errOut != "" || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"ok":false`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one JSON error on stdout", code, out, errOut)
	}
}

// helperFiles are the files of package main that hold no command.
var helperFiles = []string{"main.go", "cli_agents.go", "cli_backends.go", "cli_flags.go", "cli_io.go", "cli_supervise.go"}

// TestOneFilePerCommand: each command's run function is defined in
// cli_<name>.go (pause and cancel share cli_control.go), and every other
// file of the package is a known helper file, so a new command needs its
// own file and no catch-all can grow back.
func TestOneFilePerCommand(t *testing.T) {
	t.Parallel()
	fileOf := map[string]string{"pause": "cli_control.go", "cancel": "cli_control.go"}
	commandFiles := map[string]bool{}
	for _, c := range commands() {
		want, ok := fileOf[c.name]
		if !ok {
			want = "cli_" + c.name + ".go"
		}
		fn := runtime.FuncForPC(reflect.ValueOf(c.run).Pointer())
		file, _ := fn.FileLine(fn.Entry())
		if filepath.Base(file) != want {
			t.Errorf("command %s runs %s, defined in %s; want it in %s", c.name, fn.Name(), filepath.Base(file), want)
		}
		commandFiles[want] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") && !commandFiles[f] && !slices.Contains(helperFiles, f) {
			t.Errorf("%s holds no command and is not a helper file (%v)", f, helperFiles)
		}
	}
}
