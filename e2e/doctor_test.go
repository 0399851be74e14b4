package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctorReport is `doctor --execution-backend B --json` (contract section 4).
type doctorReport struct {
	Backend          string  `json:"backend"`
	Available        *bool   `json:"available"`
	KernelIsolation  *bool   `json:"kernel_isolation"`
	NetworkIsolation *bool   `json:"network_isolation"`
	Reason           *string `json:"reason"`
	Remedy           string  `json:"remedy"`
	Selected         string  `json:"selected"`
	FallbackReason   string  `json:"fallback_reason"`
	Warning          string  `json:"warning"`
}

// TestDoctor checks doctor for every backend, as root and as uid 65534, on
// this host and on a simulated restricted host (a bwrap that fails like one
// without user namespaces, through the documented SIMJECTURE_BWRAP setting).
func TestDoctor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run as both root and uid 65534")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	tmp := nobodyDir(t)
	exe := filepath.Join(tmp, "simjecture")
	copyExec(t, bin, exe)
	fakeBwrap := filepath.Join(tmp, "bwrap")
	if err := os.WriteFile(fakeBwrap, []byte("#!/bin/sh\necho 'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const sandboxWarning = "not a security sandbox"
	cases := []struct {
		name, backend      string
		nobody, restricted bool
		code               int
		available          bool
		selected           string
		contains           string // in reason or warning
	}{
		{"root bubblewrap", "bubblewrap", false, false, 0, true, "", ""},
		{"root proot", "proot-cooperative", false, false, 1, false, "", "unprivileged account"},
		{"root native", "process-cooperative", false, false, 1, false, "", "unprivileged account"},
		{"root auto", "auto", false, false, 0, true, "bubblewrap", ""},
		{"nobody bubblewrap", "bubblewrap", true, false, 0, true, "", ""},
		{"nobody proot", "proot-cooperative", true, false, 0, true, "", ""},
		{"nobody native", "process-cooperative", true, false, 0, true, "", ""},
		{"nobody auto", "auto", true, false, 0, true, "bubblewrap", ""},
		{"restricted root auto", "auto", false, true, 1, false, "", "ENOSPC"},
		{"restricted nobody auto", "auto", true, true, 0, true, "proot-cooperative", sandboxWarning},
		{"restricted nobody bubblewrap", "bubblewrap", true, true, 1, false, "", "ENOSPC"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argv := []string{exe, "doctor", "--execution-backend", tc.backend, "--json"}
			if tc.nobody {
				argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}, argv...)
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env()
			if tc.restricted {
				cmd.Env = append(cmd.Env, "SIMJECTURE_BWRAP="+fakeBwrap)
			}
			out, _ := cmd.Output()
			if cmd.ProcessState.ExitCode() != tc.code {
				t.Fatalf("exit %d, want %d: %s", cmd.ProcessState.ExitCode(), tc.code, out)
			}
			var rep doctorReport
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, out)
			}
			if rep.Available == nil || rep.KernelIsolation == nil || rep.NetworkIsolation == nil || rep.Reason == nil {
				t.Fatalf("missing contract fields: %s", out)
			}
			if *rep.Available != tc.available || rep.Selected != tc.selected {
				t.Fatalf("available=%v selected=%q, want %v %q: %s", *rep.Available, rep.Selected, tc.available, tc.selected, out)
			}
			text := *rep.Reason + " " + rep.Warning + " " + rep.FallbackReason
			if !strings.Contains(text, tc.contains) {
				t.Fatalf("want %q in reason/warning: %s", tc.contains, out)
			}
			if !*rep.Available && rep.Remedy == "" {
				t.Fatalf("an unavailable backend needs a remedy: %s", out)
			}
			if rep.Selected == "proot-cooperative" && (rep.FallbackReason == "" || !strings.Contains(rep.Warning, sandboxWarning)) {
				t.Fatalf("a fallback needs fallback_reason and the warning: %s", out)
			}
			isolated := rep.Backend == "bubblewrap"
			if *rep.KernelIsolation != isolated || *rep.NetworkIsolation != isolated {
				t.Fatalf("isolation flags wrong for %s: %s", rep.Backend, out)
			}
		})
	}
	t.Run("all backends, each once", func(t *testing.T) {
		r := sj(t, "", "doctor", "--json")
		var all struct {
			Backends []doctorReport `json:"backends"`
			Auto     string         `json:"auto"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &all); err != nil || r.code != 0 {
			t.Fatalf("exit %d, %v:\n%s", r.code, err, r)
		}
		seen := map[string]bool{}
		for _, b := range all.Backends {
			if seen[b.Backend] || b.Selected != "" {
				t.Errorf("backend %q listed twice or with a selection: %s", b.Backend, r.stdout)
			}
			seen[b.Backend] = true
		}
		if len(all.Backends) != 3 || all.Auto != "bubblewrap" {
			t.Errorf("want the three backends once and auto = bubblewrap: %s", r.stdout)
		}
		if txt := sj(t, "", "doctor"); strings.Count(txt.stdout, "bubblewrap ") != 1 || !strings.Contains(txt.stdout, "selects bubblewrap") {
			t.Errorf("the text lists bubblewrap once and says what auto selects:\n%s", txt.stdout)
		}
	})
	t.Run("unknown backend", func(t *testing.T) {
		if r := sj(t, "", "doctor", "--execution-backend", "docker", "--json"); r.code != 2 || len(lines(r.stderr)) != 1 {
			t.Fatalf("want exit 2 and one line:\n%s", r)
		}
	})
}
