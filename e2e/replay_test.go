package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// restrictedHost is the environment of a host where no execution backend
// works: run as root (no cooperative fallback) with a bwrap that fails its
// probe the way one without user namespaces does (SIMJECTURE_BWRAP). It
// also gives the commands their own workspace root.
func restrictedHost(t *testing.T) (envv []string, root string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root has no cooperative fallback")
	}
	tmp := t.TempDir()
	fake := filepath.Join(tmp, "bwrap")
	writeFile(t, fake, "#!/bin/sh\necho 'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)' >&2\nexit 1\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(tmp, "workspace")
	return append(env(), "SIMJECTURE_BWRAP="+fake, "SIMJECTURE_WORKSPACE="+root), root
}

// sjEnv runs the binary to completion with the environment envv.
func sjEnv(t *testing.T, envv []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = envv
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("simjecture %s: %v", strings.Join(args, " "), err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// TestDemoWithoutBackend checks that on a host where neither bubblewrap
// nor proot can run experiments the demo refuses with exit 2, names both
// probes' reasons and the replay, and writes nothing.
func TestDemoWithoutBackend(t *testing.T) {
	envv, root := restrictedHost(t)
	for _, args := range [][]string{{"demo", "--batch"}, {"demo", filepath.Join(root, "mine"), "--batch"}} {
		r := sjEnv(t, envv, args...)
		if r.code != 2 {
			t.Fatalf("%v: want exit 2:\n%s", args, r)
		}
		for _, want := range []string{"bubblewrap: bwrap: Creating new namespace failed", "(ENOSPC)",
			"proot-cooperative: cooperative execution requires an unprivileged account", "simjecture demo --replay"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r)
			}
		}
		if n := len(lines(r.stderr)); n > 4 {
			t.Errorf("%v: %d lines on stderr, want a short block:\n%s", args, n, r)
		}
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Fatalf("%v: something was written under %s (%v)", args, root, err)
		}
	}
}

// TestDemoReplay checks that on the same host `demo --replay` writes a
// completed record that verify accepts and the status reads as completed,
// into a new folder, an empty one or (without DIR) a new one under the
// workspace root; a non-empty folder is refused with nothing written.
func TestDemoReplay(t *testing.T) {
	envv, root := restrictedHost(t)
	cases := []struct {
		name    string
		dir     string // "" for the default
		prepare func(dir string)
		code    int
	}{
		{"new folder", filepath.Join(root, "a", "record"), nil, 0},
		{"empty folder", filepath.Join(root, "empty"), func(d string) { mkdir(t, d) }, 0},
		{"default folder", "", nil, 0},
		{"non-empty folder", filepath.Join(root, "full"), func(d string) { mkdir(t, d); writeFile(t, filepath.Join(d, "notes.txt"), "mine") }, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prepare != nil {
				tc.prepare(tc.dir)
			}
			before := tree(t, root)
			args := []string{"demo", "--replay", "--batch"}
			if tc.dir != "" {
				args = append(args, tc.dir)
			}
			r := sjEnv(t, envv, args...)
			if r.code != tc.code {
				t.Fatalf("want exit %d:\n%s", tc.code, r)
			}
			if tc.code != 0 {
				if after := tree(t, root); after != before || len(lines(r.stderr)) != 1 {
					t.Fatalf("want one line and nothing written:\n%s\nbefore:\n%s\nafter:\n%s", r, before, after)
				}
				return
			}
			dir := recordDir(t, r.stderr)
			if !strings.Contains(r.stderr, "Study completed. Records: "+dir) || (tc.dir != "" && dir != tc.dir) {
				t.Fatalf("want the demo's final summary for %s:\n%s", tc.dir, r)
			}
			checkRecord(t, envv, dir)
			checkOwnElapsed(t, envv, dir, r.stderr)
		})
	}
}

// checkRecord checks that the record in dir verifies, reads as completed
// and carries the record marker.
func checkRecord(t *testing.T, envv []string, dir string) {
	t.Helper()
	if v := sjEnv(t, envv, "verify", "--campaign", dir); v.code != 0 {
		t.Fatalf("verify refuses the record:\n%s", v)
	} else if !strings.Contains(v.stdout, "written by an earlier release: report.json was compared by what it says, LEDGER.md was not compared") {
		t.Errorf("verify of a record an earlier release wrote does not say what it did not compare:\n%s", v)
	}
	s := sjEnv(t, envv, "status", "--campaign", dir, "--json")
	var snap struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(s.stdout), &snap); err != nil || snap.Status != "completed" {
		t.Fatalf("status %q (%v), want completed:\n%s", snap.Status, err, s)
	}
	if _, err := os.Stat(filepath.Join(dir, "RECORD")); err != nil {
		t.Fatalf("no record marker: %v", err)
	}
}

// recordDir is the folder named by the "Demo record: DIR (…)" line.
func recordDir(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range lines(stderr) {
		if rest, ok := strings.CutPrefix(l, "Demo record: "); ok {
			dir, _, _ := strings.Cut(rest, " (")
			return dir
		}
	}
	t.Fatalf("no \"Demo record:\" line:\n%s", stderr)
	return ""
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// tree lists every path under dir ("" when it is missing).
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		b.WriteString(p + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var elapsedClock = regexp.MustCompile(`(\d+):(\d\d) elapsed`)

// checkOwnElapsed: the summary's elapsed time is the study's own duration
// (within its wall budget), not the time since the record was made.
func checkOwnElapsed(t *testing.T, envv []string, dir, stderr string) {
	t.Helper()
	m := elapsedClock.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("the summary gives no elapsed time:\n%s", stderr)
	}
	minutes, _ := strconv.Atoi(m[1])
	seconds, _ := strconv.Atoi(m[2])
	elapsed := time.Duration(minutes*60+seconds) * time.Second
	var snap struct {
		CreatedAt time.Time `json:"created_at"`
		Deadline  time.Time `json:"deadline"`
	}
	s := sjEnv(t, envv, "status", "--campaign", dir, "--json")
	if err := json.Unmarshal([]byte(s.stdout), &snap); err != nil {
		t.Fatalf("status --json: %v:\n%s", err, s)
	}
	if budget := snap.Deadline.Sub(snap.CreatedAt); elapsed > budget {
		t.Errorf("the record's summary says %v elapsed, more than its wall budget %v (made %v ago):\n%s",
			elapsed, budget, time.Since(snap.CreatedAt).Round(time.Second), stderr)
	}
}
