package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProgramPins: the study's programs are pinned at the first check; a
// later check refuses a program rewritten, replaced, removed or whose
// name now resolves to another file, and accepts one only touched.
func TestProgramPins(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, prog, link, other string)
		want   string // "" accepted
	}{
		{"unchanged", func(*testing.T, string, string, string) {}, ""},
		{"touched", func(t *testing.T, prog, _, _ string) {
			later := time.Now().Add(time.Hour)
			must(t, os.Chtimes(prog, later, later))
		}, ""},
		{"rewritten", func(t *testing.T, prog, _, _ string) {
			must(t, os.WriteFile(prog, []byte("#!/bin/sh\nexit 1\n"), 0o755))
		}, "changed"},
		{"replaced by a rename", func(t *testing.T, prog, _, other string) { must(t, os.Rename(other, prog)) }, "changed"},
		{"removed", func(t *testing.T, prog, _, _ string) { must(t, os.Remove(prog)) }, "is gone"},
		{"link retargeted", func(t *testing.T, _, link, other string) {
			must(t, os.Remove(link))
			must(t, os.Symlink(other, link))
		}, "now resolves to " + "OTHER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prog, other, link := filepath.Join(dir, "agent"), filepath.Join(dir, "other"), filepath.Join(dir, "link")
			must(t, os.WriteFile(prog, []byte("#!/bin/sh\nexit 0\n"), 0o755))
			must(t, os.WriteFile(other, []byte("#!/bin/sh\necho forged\n"), 0o755))
			must(t, os.Symlink(prog, link))
			pp := programPins{names: []string{link}}
			if err := pp.check(); err != nil {
				t.Fatalf("first check: %v", err)
			}
			tc.change(t, prog, link, other)
			err := pp.check()
			want := strings.ReplaceAll(tc.want, "OTHER", other)
			switch {
			case want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("= %v, want a refusal saying %q", err, want)
			}
		})
	}
}

// TestStudyProgramsFollowTheInterpreter: a script's "#!" interpreter is a
// program of the study too (through env, the program env starts), to a
// bounded depth and without repeats.
func TestStudyProgramsFollowTheInterpreter(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inner := write("inner", "#!/bin/sh\nexec true\n")
	wrapper := write("wrapper", "#!"+inner+" -x\n")
	agent := write("agent", "#!"+wrapper+"\nprint(1)\n")
	viaEnv := write("viaenv", "#!/usr/bin/env -S FOO=1 sh -e\necho\n")
	loop := write("loop", "#!"+filepath.Join(dir, "loop")+"\n")
	for _, tc := range []struct {
		name  string
		names []string
		want  []string
	}{
		{"a chain of scripts", []string{agent}, []string{agent, wrapper, inner, "/bin/sh"}},
		{"env names a program on PATH", []string{viaEnv}, []string{viaEnv, "/usr/bin/env", "sh"}},
		{"a script that names itself", []string{loop}, []string{loop}},
		{"a binary", []string{"/bin/sh"}, []string{"/bin/sh"}},
		{"a missing program", []string{filepath.Join(dir, "none")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := studyPrograms(tc.names...); !slices.Equal(got, tc.want) {
				t.Errorf("studyPrograms(%v) = %v, want %v", tc.names, got, tc.want)
			}
		})
	}
}
