package installer

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// userPlan is a current-user plan for prefix installing source, as decide
// would make it.
func userPlan(prefix, source string) *plan {
	return &plan{
		r: &reporter{w: io.Discard}, mode: ModeUser, source: source, prefix: prefix,
		launcher: filepath.Join(prefix, binDir, "simjecture"), acct: account{Name: "me", UID: os.Getuid()},
		lay: userLayout(),
	}
}

// fakeVersion is a stand-in binary: --help exits with code, anything else
// prints its version.
func fakeVersion(version string, code int) string {
	return "#!/bin/sh\nif [ \"$1\" = --help ]; then exit " + strconv.Itoa(code) + "; fi\necho " + version + "\n"
}

func TestInstallAndUpgradeInPlace(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "opt", "simjecture")
	steps := []struct {
		name, script, wantVersion string
		err                       error
	}{
		{"first install", fakeVersion("v1", 0), "v1", nil},
		{"upgrade", fakeVersion("v2", 0), "v2", nil},
		{"broken new binary keeps the old one", fakeVersion("v3", 1), "v2", ErrStep},
		{"same binary again", fakeVersion("v2", 0), "v2", nil},
	}
	for i, s := range steps {
		src := writeScript(t, dir, "src"+string(rune('a'+i)), s.script)
		p := userPlan(prefix, src)
		if m, err := inspectPrefix(prefix, "me"); err != nil {
			t.Fatalf("%s: inspect: %v", s.name, err)
		} else {
			p.marker = m
		}
		err := p.preparePrefix()
		if err == nil {
			_, err = p.installBinary(context.Background())
		}
		if !errors.Is(err, s.err) || (s.err == nil && err != nil) {
			t.Fatalf("%s: error %v, want %v", s.name, err, s.err)
		}
		out, err := exec.Command(p.launcher, "version").Output()
		if err != nil || strings.TrimSpace(string(out)) != s.wantVersion {
			t.Fatalf("%s: the launcher runs %q (%v), want %s", s.name, out, err, s.wantVersion)
		}
		checkApp(t, filepath.Join(prefix, appDir))
	}
}

// checkApp checks that no staging file is left and at most two binaries
// (the current one and the one it replaced) are kept.
func checkApp(t *testing.T, app string) {
	t.Helper()
	entries, err := os.ReadDir(app)
	if err != nil {
		t.Fatal(err)
	}
	binaries := 0
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), stagingStem):
			t.Errorf("staging file %s left behind", e.Name())
		case strings.HasPrefix(e.Name(), binaryStem):
			binaries++
		}
	}
	if binaries > 2 {
		t.Errorf("%d binaries kept, want at most 2", binaries)
	}
}

func TestMarkerWrittenBeforeTheBinary(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "sj")
	p := userPlan(prefix, writeScript(t, dir, "broken", fakeVersion("v0", 1)))
	if err := p.preparePrefix(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.installBinary(context.Background()); !errors.Is(err, ErrStep) {
		t.Fatalf("installing a broken binary: %v, want ErrStep", err)
	}
	if m, err := inspectPrefix(prefix, "me"); err != nil || m == nil {
		t.Fatalf("after a failed first run the folder must still be ours to retry: %v", err)
	}
}

func TestUserPathsAndLauncherPath(t *testing.T) {
	dir := t.TempDir()
	foreign := writeScript(t, dir, "foreign", "#!/bin/sh\necho someone else\n")
	ours := writeScript(t, dir, "ours", launcherText(launcherSpec{Binary: "/x"}))
	cases := []struct {
		name, launcher string
		err            error
	}{
		{"inside the prefix", filepath.Join(dir, "prefix", "bin", "simjecture"), nil},
		{"missing outside", filepath.Join(dir, "none"), nil},
		{"ours outside", ours, nil},
		{"foreign outside", foreign, ErrUnmanaged},
	}
	for _, c := range cases {
		if err := checkLauncherPath(c.launcher, filepath.Join(dir, "prefix")); !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("%s: checkLauncherPath = %v, want %v", c.name, err, c.err)
		}
	}
}

func TestUserPaths(t *testing.T) {
	alice := &user.User{Username: "alice", Uid: "1000", HomeDir: "/home/alice"}
	root := &user.User{Username: "root", Uid: "0", HomeDir: "/root"}
	cases := []struct {
		name         string
		prefix, xdg  string
		u            *user.User
		wantP, wantL string
		err          error
	}{
		{"user default", "", "", alice, "/home/alice/.local/share/simjecture", "/home/alice/.local/bin/simjecture", nil},
		{"user XDG_DATA_HOME", "", "/data", alice, "/data/simjecture", "/home/alice/.local/bin/simjecture", nil},
		{"relative XDG ignored", "", "data", alice, "/home/alice/.local/share/simjecture", "/home/alice/.local/bin/simjecture", nil},
		{"--prefix", "/opt/sj/", "", alice, "/opt/sj/", "/opt/sj/bin/simjecture", nil},
		{"root never uses /root", "", "", root, rootUserPrefix, rootUserLauncher, nil},
		{"no home", "", "", &user.User{Username: "x", Uid: "5"}, "", "", ErrInvalid},
	}
	for _, c := range cases {
		p, l, err := userPaths(c.prefix, c.u, c.xdg)
		if p != c.wantP || l != c.wantL || !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("%s: userPaths = %q, %q, %v; want %q, %q, %v", c.name, p, l, err, c.wantP, c.wantL, c.err)
		}
	}
}
