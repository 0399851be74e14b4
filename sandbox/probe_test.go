package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseBackend(t *testing.T) {
	cases := []struct {
		in      string
		want    Backend
		wantErr bool
	}{
		{"bubblewrap", Bubblewrap, false},
		{"proot-cooperative", ProotCooperative, false},
		{"process-cooperative", ProcessCooperative, false},
		{"auto", Auto, false},
		{"docker", "", true},
		{"", "", true},
	}
	for _, c := range cases {
		got, err := ParseBackend(c.in)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("ParseBackend(%q) = %q, %v", c.in, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
	if !IsCooperative(ProotCooperative) || !IsCooperative(ProcessCooperative) || IsCooperative(Bubblewrap) || IsCooperative(Auto) {
		t.Error("IsCooperative")
	}
}

func TestProbeAsRoot(t *testing.T) {
	requireRoot(t)
	ctx := t.Context()
	cases := []struct {
		b         Backend
		available bool
		reason    string
	}{
		{Bubblewrap, true, ReasonProbePassed},
		{ProotCooperative, false, ReasonUnprivileged},
		{ProcessCooperative, false, ReasonUnprivileged},
	}
	for _, c := range cases {
		r := Probe(ctx, c.b)
		if r.Available != c.available || r.Reason != c.reason || r.Backend != c.b {
			t.Errorf("Probe(%s) = %+v", c.b, r)
		}
		if !c.available && c.reason == ReasonUnprivileged && r.Remedy != RemedyUnprivileged {
			t.Errorf("Probe(%s) remedy %q", c.b, r.Remedy)
		}
	}
	if r := Select(ctx, Auto); r.Selected != Bubblewrap || !r.KernelIsolation || !r.NetworkIsolation {
		t.Errorf("Select(auto) = %+v", r)
	}
	if r := Select(ctx, ProotCooperative); r.Available || r.Selected != "" || r.Backend != ProotCooperative {
		t.Errorf("explicit proot as root was replaced: %+v", r)
	}
}

func TestProbeAsNobody(t *testing.T) {
	requireRoot(t)
	for _, info := range Backends() {
		b := info.Name
		var r Report
		runJSON(t, nobodyCommand(t, "probe", string(b)), &r)
		if !r.Available || r.Reason != ReasonProbePassed {
			t.Errorf("%s as nobody: %+v", b, r)
		}
	}
	var r Report
	runJSON(t, nobodyCommand(t, "select", string(Auto)), &r)
	if r.Selected != Bubblewrap || r.Warning != "" {
		t.Errorf("auto as nobody: %+v", r)
	}
}

// restrictedHost runs the test binary in select mode inside a user namespace
// that forbids further user namespaces, so the nested bwrap probe fails.
func restrictedHost(t *testing.T, asNobody bool) Report {
	t.Helper()
	dir := sharedDir(t)
	argv := []string{"--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "--dev", "/dev",
		"--proc", "/proc", "--tmpfs", "/tmp", "--ro-bind", dir, dir, "--", filepath.Join(dir, "sandbox.test"), string(Auto)}
	if asNobody {
		argv = append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "bwrap"}, argv...)
	}
	cmd := exec.Command("bwrap", argv...)
	if asNobody {
		cmd = exec.Command("setpriv", argv...)
	}
	cmd.Env = []string{envTestHelper + "=select", "PATH=/usr/bin:/bin", raceNoExitSleep}
	var r Report
	runJSON(t, cmd, &r)
	return r
}

func TestSelectRestrictedHost(t *testing.T) {
	requireRoot(t)
	r := restrictedHost(t, true)
	if !r.Available || r.Selected != ProotCooperative || r.FallbackReason == "" || !strings.Contains(r.Warning, "not a security sandbox") || r.KernelIsolation {
		t.Errorf("restricted host as nobody: %+v", r)
	}
	t.Logf("fallback: %s", r.FallbackReason)
	r = restrictedHost(t, false)
	if r.Available || r.Selected != "" || r.Backend != Bubblewrap || r.Remedy == "" || r.Reason == "" {
		t.Errorf("restricted host as root: %+v", r)
	}
}

func TestProbeOverride(t *testing.T) {
	dir := t.TempDir()
	noisy := filepath.Join(dir, "fake-bwrap")
	must(t, os.WriteFile(noisy, []byte("#!/bin/sh\nhead -c 3000 /dev/zero | tr '\\0' a >&2\necho ' namespace failed' >&2\nexit 1\n"), 0o755))
	cases := []struct {
		path, reason string
	}{
		{filepath.Join(dir, "missing"), "Missing bubblewrap executable"},
		{"/usr/bin/false", "exit status 1"},
		{noisy, "namespace failed"},
	}
	for _, c := range cases {
		t.Setenv(EnvBwrap, c.path)
		r := Select(t.Context(), Bubblewrap)
		if r.Available || r.Selected != "" || !strings.Contains(r.Reason, c.reason) || len([]rune(r.Reason)) > 2000 || r.Remedy == "" {
			t.Errorf("%s: %+v", c.path, r)
		}
	}
	t.Setenv(EnvProot, filepath.Join(dir, "missing"))
	if os.Geteuid() != 0 {
		if r := Probe(t.Context(), ProotCooperative); r.Available || r.Reason != "Missing proot executable" {
			t.Errorf("proot override: %+v", r)
		}
	}
	if r := Select(t.Context(), Auto); r.Available || r.Selected != "" || r.Backend != Bubblewrap {
		t.Errorf("auto with both failing: %+v", r)
	}
}
