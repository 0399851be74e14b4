package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestPathsToPin: the folders between a writable host folder and each
// path are pinned (bound onto themselves), shallowest first, once each;
// nothing outside the writable folders, and not those folders themselves.
func TestPathsToPin(t *testing.T) {
	open := []string{"/root", "/tmp"}
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"campaign deep in /tmp", []string{"/tmp/a/b/study"}, []string{"/tmp/a", "/tmp/a/b"}},
		{"campaign right in the home", []string{"/root/study"}, nil},
		{"campaign outside", []string{"/srv/studies/x"}, nil},
		{"program and campaign share a folder", []string{"/tmp/a/study", "/tmp/a/agent/run.py"}, []string{"/tmp/a", "/tmp/a/agent"}},
		{"a prefix is not a parent", []string{"/tmpx/a/b"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pathsToPin(tc.paths, open); !slices.Equal(got, tc.want) {
				t.Errorf("pathsToPin(%v) = %v, want %v", tc.paths, got, tc.want)
			}
		})
	}
}

// TestLaunchersBeforePATH: bwrap and proot are looked for in the system's
// folders before PATH, so one planted in a folder an agent may write that
// comes first on PATH (~/go/bin) is not what a later supervisor runs as
// root; PATH still finds one the system's folders do not have.
func TestLaunchersBeforePATH(t *testing.T) {
	sys, err := exec.LookPath("sh")
	if err != nil || !slices.ContainsFunc(systemBin, func(d string) bool { return filepath.Dir(sys) == d }) {
		t.Skipf("no sh in the system's folders here (%q, %v)", sys, err)
	}
	planted := t.TempDir()
	for _, name := range []string{"sh", "simjecture-test-only-launcher"} {
		must(t, os.WriteFile(filepath.Join(planted, name), []byte("#!/bin/sh\necho planted\n"), 0o755))
	}
	t.Setenv("PATH", planted+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("SIMJECTURE_TEST_LAUNCHER", "")
	if got, err := launcherPath("SIMJECTURE_TEST_LAUNCHER", "sh"); err != nil || filepath.Dir(got) == planted {
		t.Errorf("launcherPath(sh) = %q, %v; want the system's, not the one planted first on PATH", got, err)
	}
	if got, err := launcherPath("SIMJECTURE_TEST_LAUNCHER", "simjecture-test-only-launcher"); err != nil || filepath.Dir(got) != planted {
		t.Errorf("launcherPath of a program only on PATH = %q, %v; want PATH's", got, err)
	}
}
