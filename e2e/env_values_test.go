package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoNamesTheVariable: a workspace root that is a file, and an
// unknown default execution backend, are the environment's values: demo
// (and the TUI's home) refuse them with exit 2 and one line naming the
// variable, before writing anything.
func TestDemoNamesTheVariable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  func(tmp string) []string
		args []string
		want []string
	}{
		{"workspace is a file", func(tmp string) []string { return []string{"SIMJECTURE_WORKSPACE=" + filepath.Join(tmp, "somefile")} },
			[]string{"demo", "--batch"}, []string{"SIMJECTURE_WORKSPACE=", "is a file, not a folder"}},
		{"workspace has a file in its path", func(tmp string) []string {
			return []string{"SIMJECTURE_WORKSPACE=" + filepath.Join(tmp, "somefile", "studies")}
		}, []string{"demo", "--replay", "--batch"}, []string{"SIMJECTURE_WORKSPACE=", "has a file in its path"}},
		{"unknown default execution backend", func(string) []string { return []string{"SIMJECTURE_DEFAULT_EXECUTION_BACKEND=bogus"} },
			[]string{"demo", "--batch"}, []string{`SIMJECTURE_DEFAULT_EXECUTION_BACKEND="bogus"`, "choose one of"}},
		{"unknown default execution backend, demo in a folder", func(string) []string {
			return []string{"SIMJECTURE_DEFAULT_EXECUTION_BACKEND=bogus"}
		}, []string{"demo", "DIR", "--batch"}, []string{`SIMJECTURE_DEFAULT_EXECUTION_BACKEND="bogus"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			writeFile(t, filepath.Join(tmp, "somefile"), "not a folder\n")
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "DIR" {
					args[i] = filepath.Join(tmp, "demo")
				}
			}
			before := fingerprint(t, tmp)
			r := sjWith(t, append(scratchEnv(tmp), tt.env(tmp)...), "", args...)
			for _, w := range tt.want {
				checkInvalid(t, r, w)
			}
			if strings.Contains(r.stderr, "--execution-backend") {
				t.Errorf("demo has no --execution-backend flag; the error must name the variable: %s", r)
			}
			if after := fingerprint(t, tmp); after != before {
				t.Errorf("%s changed although the input was refused:\nbefore:\n%s\nafter:\n%s", tmp, before, after)
			}
		})
	}
}
