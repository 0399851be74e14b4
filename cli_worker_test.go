package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestAddFlagUsesAreFlags: every flag addFlagUses limits to some kinds of
// worker is a flag of `worker add`, and applies to at least one kind.
func TestAddFlagUsesAreFlags(t *testing.T) {
	t.Parallel()
	var usage bytes.Buffer
	if code := workerAdd(t.Context(), []string{"--help"}, stdio{out: &bytes.Buffer{}, err: &usage}); code != exitOK {
		t.Fatalf("worker add --help: exit %d", code)
	}
	for flag, use := range addFlagUses {
		if !strings.Contains(usage.String(), "--"+flag+" ") {
			t.Errorf("addFlagUses names --%s, which worker add does not have:\n%s", flag, usage.String())
		}
		if use&(forSSH|forSlurm|forSlurmLogin) == 0 {
			t.Errorf("--%s applies to no kind of worker", flag)
		}
	}
}

// TestOneLineDropsSentinels: the words of every exit-2 sentinel, however
// nested, are dropped from the end of the line; other endings stay.
func TestOneLineDropsSentinels(t *testing.T) {
	t.Parallel()
	tests := []struct{ msg, want string }{
		{"--cpus: 0 is outside 1-65536: invalid worker profile: invalid input", "--cpus: 0 is outside 1-65536"},
		{"--prefix / is not an installation folder: invalid install request: usage", "--prefix / is not an installation folder"},
		{"worker \"x\": no such worker: invalid input", "worker \"x\": no such worker"},
		{"line one\nline two: usage", "line one line two"},
		{"invalid worker profile", "invalid worker profile"},
	}
	for _, tt := range tests {
		if got := oneLine(errString(tt.msg)); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
