package scripted

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		stdin string
		code  int
	}{
		{"help", nil, []string{"--help"}, "", 0},
		{"unexpected argument", map[string]string{envRole: "worker"}, []string{"x"}, "", 2},
		{"no role", nil, nil, "", 2},
		{"unknown role", map[string]string{envRole: "director"}, nil, "", 2},
		{"worker without bin", map[string]string{envRole: "worker"}, nil, "", 2},
		{"reviewer with malformed packet", map[string]string{envRole: "reviewer"}, nil, "{", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), func(k string) string { return tc.env[k] }, tc.args,
				strings.NewReader(tc.stdin), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if code != 0 && stderr.Len() == 0 {
				t.Fatal("no message on stderr")
			}
		})
	}
}

func TestDemoTexts(t *testing.T) {
	t.Parallel()
	c, err := ParseCriterion(DemoHypothesis())
	if err != nil || !sameNum(c.Threshold, 0.01) {
		t.Fatalf("hypothesis threshold %+v, %v", c, err)
	}
	if !strings.Contains(DemoInstructions(), "max_rel_energy_error") || len(KeplerSource()) == 0 {
		t.Fatal("demo assets incomplete")
	}
}

func TestRunWorkerThroughLabSubprocess(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	calls := filepath.Join(t.TempDir(), "calls")
	bin := fakeBin(t, `cat >/dev/null; echo "$1 $2" >>`+calls+`
echo '{"ok":true,"result":{"claims":[{"id":"root","statement":"x within 1 %","status":"supported"}]}}'`)
	env := map[string]string{envRole: "worker", envBin: bin, envTurn: "1"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), func(k string) string { return env[k] }, nil, strings.NewReader("prompt"), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(calls)
	if err != nil || string(got) != "lab status\n" {
		t.Fatalf("lab calls %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, SourceName)); err != nil {
		t.Fatalf("kepler.py not written in the working directory: %v", err)
	}
}
