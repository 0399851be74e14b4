package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// TestSettingsAreReadOnly: the settings bound with WithSettings — a
// folder, a file, and a folder reached through a symlink, all in a folder
// the agent may write — cannot be written, replaced or moved by the
// enclosed agent, which still writes next to them; a settings folder that
// holds one the agent may write is left out (its home stays writable).
func TestSettingsAreReadOnly(t *testing.T) {
	e, open := enclosureWithOpenFolder(t)
	folder, file, real := filepath.Join(open, "ssh"), filepath.Join(open, "known_hosts"), filepath.Join(open, "dotfiles")
	for _, d := range []string{folder, real} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{file, filepath.Join(folder, "config"), filepath.Join(real, "config")} {
		if err := os.WriteFile(f, []byte("operator's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(open, "linked")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e = e.WithSettings(folder, file, link, filepath.Join(open, "missing"), open)
	if want := []string{folder, file, real}; !slices.Equal(e.settings, want) {
		t.Fatalf("settings bound: %q, want %q (the missing one and the open folder left out)", e.settings, want)
	}
	campaign := t.TempDir()
	script := `cd "$1"
try() { if ( eval "$2" ) 2>/dev/null; then echo "$1 written"; else echo "$1 refused"; fi; }
try folder-write 'echo forged > ssh/config'
try folder-new 'echo forged > ssh/new'
try folder-move 'mv ssh ssh.moved'
try file-write 'echo forged > known_hosts'
try file-rename 'echo forged > kh.new && mv kh.new known_hosts'
try link-write 'echo forged > linked/config'
try beside 'echo mine > beside'`
	out := runEnclosed(t, e.Wrap(campaign, nil, []string{"sh", "-c", script, "sh", open}))
	for _, line := range strings.Split(out, "\n") {
		name, verdict, _ := strings.Cut(line, " ")
		if want := map[bool]string{true: "written", false: "refused"}[name == "beside"]; verdict != want {
			t.Errorf("%s: %s, want %s", name, verdict, want)
		}
	}
	for _, f := range []string{file, filepath.Join(folder, "config"), filepath.Join(real, "config")} {
		if b, _ := os.ReadFile(f); string(b) != "operator's\n" {
			t.Errorf("%s now holds %q", f, b)
		}
	}
}

// TestSettingsFolderHoldingTheCampaign: a settings folder that holds the
// campaign folder is read-only to the agent, while the campaign's writable
// folder inside it stays writable.
func TestSettingsFolderHoldingTheCampaign(t *testing.T) {
	e, open := enclosureWithOpenFolder(t)
	settings := filepath.Join(open, "config")
	campaign := filepath.Join(settings, "studies", "c1")
	research := filepath.Join(campaign, "research")
	if err := os.MkdirAll(research, 0o755); err != nil {
		t.Fatal(err)
	}
	e = e.WithSettings(settings)
	script := `S=$1 R=$2
try() { if ( eval "$2" ) 2>/dev/null; then echo "$1 written"; else echo "$1 refused"; fi; }
try settings 'echo forged > "$S/workers.json"'
try research 'echo mine > "$R/notes.txt"'`
	out := runEnclosed(t, e.Wrap(campaign, []string{research}, []string{"sh", "-c", script, "sh", settings, research}))
	if got := out; got != "settings refused\nresearch written" {
		t.Errorf("got:\n%s\nwant the settings folder refused and research/ written", got)
	}
}

// enclosureWithOpenFolder is a real enclosure whose only folder the agent
// may write is a new temporary one (skipped where Bubblewrap does not work).
func enclosureWithOpenFolder(t *testing.T) (Enclosure, string) {
	t.Helper()
	if !Probe(context.Background(), Bubblewrap).Available {
		t.Skip("Bubblewrap is not usable here: the enclosure does not apply")
	}
	e, err := testEnclosure(true)
	if err != nil {
		t.Fatal(err)
	}
	open := t.TempDir()
	e.open = []string{open}
	return e, open
}

// runEnclosed runs an enclosed launch line and returns its output, trimmed.
func runEnclosed(t *testing.T, argv []string) string {
	t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("enclosed script: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
