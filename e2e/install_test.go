package e2e

// The installer end to end (issue 6, contract section 8). It needs root: it
// creates a throwaway system account (sjtest + random digits), installs into
// a folder under /var/tmp that the account can reach, and removes both in
// t.Cleanup. The restricted host is simulated honestly with the documented
// SIMJECTURE_BWRAP setting, pointed at a fake bwrap that fails the way bwrap
// does without user namespaces.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const instFakeBwrap = "#!/bin/sh\necho 'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)' >&2\nexit 1\n"

// instHost is one test's restricted host: a base folder, the fake bwrap and
// the throwaway account name.
type instHost struct {
	base, prefix, account string
	env                   []string
}

func TestInstallRestrictedHost(t *testing.T) {
	h := newInstHost(t)
	t.Run("under /root is refused", h.testRootRefused)
	t.Run("unmarked folder is left unchanged", h.testUnmarkedUntouched)
	r := h.install(t, h.prefix, h.account)
	if r.code != 0 {
		t.Fatalf("install: %s", r)
	}
	h.checkAccount(t)
	h.checkFiles(t)
	h.checkLauncher(t)
	t.Run("marker for another account", h.testOtherAccount)
	t.Run("second run upgrades in place", h.testUpgrade)
}

func newInstHost(t *testing.T) *instHost {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the installer e2e test needs root: it creates and removes a system account (CI runs it as root)")
	}
	for _, tool := range []string{"useradd", "userdel", "setpriv", "proot"} {
		if _, err := instTool(tool); err != nil {
			t.Skipf("the installer e2e test needs %s: %v", tool, err)
		}
	}
	base, err := os.MkdirTemp("/var/tmp", "sjinstall-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil { // the account must reach the prefix
		t.Fatal(err)
	}
	fake := filepath.Join(base, "fake-bwrap")
	if err := os.WriteFile(fake, []byte(instFakeBwrap), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &instHost{base: base, prefix: filepath.Join(base, "srv", "simjecture"), account: instAccountName(t)}
	h.env = append(env(), "SIMJECTURE_BWRAP="+fake)
	return h
}

// instAccountName picks an unused sjtest<digits> name and removes the
// account (and its home and group) at cleanup.
func instAccountName(t *testing.T) string {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("sjtest%06d", n.Int64())
	if _, err := user.Lookup(name); err == nil {
		t.Fatalf("account %s already exists", name)
	}
	instAccountCleanup(t, name)
	return name
}

// instAccountCleanup removes the account, its home and its group at cleanup.
func instAccountCleanup(t *testing.T, name string) {
	t.Cleanup(func() {
		if _, err := user.Lookup(name); err != nil {
			return
		}
		userdel, _ := instTool("userdel")
		if out, err := exec.Command(userdel, "-r", name).CombinedOutput(); err != nil {
			t.Errorf("userdel -r %s: %v: %s", name, err, out)
		}
		if groupdel, err := instTool("groupdel"); err == nil {
			_ = exec.Command(groupdel, name).Run() // gone already where userdel removes it
		}
	})
}

func instTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name), nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// instExec runs a program to completion (at most two minutes).
func instExec(t *testing.T, environ []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = environ
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	r := result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within two minutes:\n%s", strings.Join(argv, " "), r)
	}
	return r
}

func (h *instHost) install(t *testing.T, prefix, account string) result {
	t.Helper()
	return instExec(t, h.env, bin, "install", "--prefix", prefix, "--account", account, "--no-system-packages")
}

func (h *instHost) testRootRefused(t *testing.T) {
	target := "/root/sjinstall-" + randomHex(t)
	r := h.install(t, target, h.account)
	if r.code != 2 || !strings.Contains(r.stderr, "/root") {
		t.Fatalf("install --prefix %s: want exit 2 naming /root:\n%s", target, r)
	}
	if _, err := os.Lstat(target); err == nil {
		_ = os.RemoveAll(target)
		t.Fatalf("%s was created", target)
	}
	h.checkNoAccount(t, h.account)
}

func (h *instHost) testUnmarkedUntouched(t *testing.T) {
	dir := filepath.Join(h.base, "unmarked")
	for path, text := range map[string]string{"notes.txt": "keep me\n", "sub/data.bin": "\x00\x01", "secret": "0600\n"} {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := instSnapshot(t, dir)
	r := h.install(t, dir, h.account)
	if r.code != 1 || !strings.Contains(r.stderr, "left unchanged") {
		t.Fatalf("install into an unmarked folder: want exit 1 saying it was left unchanged:\n%s", r)
	}
	if after := instSnapshot(t, dir); after != before {
		t.Fatalf("the unmarked folder changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	h.checkNoAccount(t, h.account)
}

func (h *instHost) testOtherAccount(t *testing.T) {
	other := h.account + "x"
	r := h.install(t, h.prefix, other)
	if r.code != 1 || !strings.Contains(r.stderr, "left unchanged") {
		t.Fatalf("install for another account over ours: want exit 1, left unchanged:\n%s", r)
	}
	h.checkNoAccount(t, other)
}

func (h *instHost) testUpgrade(t *testing.T) {
	before := instMarker(t, h.prefix)
	r := h.install(t, h.prefix, h.account)
	if r.code != 0 || !strings.Contains(r.stdout, "upgrading in place") {
		t.Fatalf("second install: want exit 0 and an upgrade in place:\n%s", r)
	}
	after := instMarker(t, h.prefix)
	if after["installed_at"] != before["installed_at"] || after["account"] != h.account {
		t.Fatalf("marker after the upgrade %v, before %v", after, before)
	}
	h.checkFiles(t)
	h.checkLauncher(t)
}

func (h *instHost) checkNoAccount(t *testing.T, name string) {
	t.Helper()
	if _, err := user.Lookup(name); err == nil {
		t.Fatalf("account %s was created by a refused install", name)
	}
}

// passwd returns the account's /etc/passwd fields.
func (h *instHost) passwd(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) == 7 && f[0] == h.account {
			return f
		}
	}
	t.Fatalf("account %s is not in /etc/passwd", h.account)
	return nil
}

func (h *instHost) ids(t *testing.T) (uid, gid int) {
	t.Helper()
	f := h.passwd(t)
	uid, _ = strconv.Atoi(f[2])
	gid, _ = strconv.Atoi(f[3])
	return uid, gid
}

func (h *instHost) checkAccount(t *testing.T) {
	t.Helper()
	f := h.passwd(t)
	uid, gid := h.ids(t)
	if uid == 0 || f[5] != "/var/lib/"+h.account || !strings.HasSuffix(f[6], "nologin") {
		t.Fatalf("account entry %q: want non-zero uid, home /var/lib/%s, a nologin shell", strings.Join(f, ":"), h.account)
	}
	instCheckOwner(t, f[5], uid, gid, fs.ModeDir|0o750)
}

func (h *instHost) checkFiles(t *testing.T) {
	t.Helper()
	uid, gid := h.ids(t)
	instCheckOwner(t, h.prefix, 0, gid, fs.ModeDir|0o750)
	instCheckOwner(t, filepath.Join(h.prefix, "bin", "simjecture"), 0, 0, 0o755)
	binary, err := filepath.EvalSymlinks(filepath.Join(h.prefix, "app", "current"))
	if err != nil {
		t.Fatalf("app/current: %v", err)
	}
	instCheckOwner(t, binary, uid, gid, 0o750)
	if got, want := instSum(t, binary), instSum(t, bin); got != want {
		t.Fatalf("installed binary %s differs from the one under test", binary)
	}
	m := instMarker(t, h.prefix)
	if m["account"] != h.account || m["mode"] != "account" || m["managed_by"] != "simjecture install" {
		t.Fatalf("marker %v", m)
	}
	instCheckOwner(t, filepath.Join(h.prefix, ".simjecture-install"), 0, 0, 0o644)
}

// checkLauncher: started as root, the launcher runs the binary as the
// account (PRoot, which refuses root, is available; the fake bwrap set in
// SIMJECTURE_BWRAP reaches it); the binary run directly as root is not.
func (h *instHost) checkLauncher(t *testing.T) {
	t.Helper()
	launcher := filepath.Join(h.prefix, "bin", "simjecture")
	proot := []string{"doctor", "--execution-backend", "proot-cooperative", "--json"}
	if r := instExec(t, h.env, append([]string{launcher}, proot...)...); r.code != 0 || instField(t, r, "available") != true {
		t.Fatalf("launcher started as root: PRoot should be available to the account:\n%s", r)
	}
	if r := instExec(t, h.env, append([]string{filepath.Join(h.prefix, "app", "current")}, proot...)...); r.code != 1 {
		t.Fatalf("the binary run directly as root should not qualify for PRoot:\n%s", r)
	}
	r := instExec(t, h.env, launcher, "doctor", "--execution-backend", "auto", "--json")
	reason, _ := instField(t, r, "fallback_reason").(string)
	if r.code != 0 || instField(t, r, "selected") != "proot-cooperative" || !strings.Contains(reason, "Creating new namespace failed") {
		t.Fatalf("auto through the launcher should fall back to PRoot because of the fake bwrap:\n%s", r)
	}
	uid, gid := h.ids(t)
	setpriv, _ := instTool("setpriv")
	asAccount := []string{setpriv, "--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), "--clear-groups", launcher}
	if r := instExec(t, h.env, append(asAccount, proot...)...); r.code != 0 {
		t.Fatalf("launcher started as the account:\n%s", r)
	}
}

func instField(t *testing.T, r result, key string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("doctor --json is not one JSON object: %v\n%s", err, r)
	}
	return m[key]
}

func instMarker(t *testing.T, prefix string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(prefix, ".simjecture-install"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("marker: %v\n%s", err, data)
	}
	return m
}

func instCheckOwner(t *testing.T, path string, uid, gid int, mode fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	got := fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid)
	if int(st.Uid) != uid || int(st.Gid) != gid || got != mode {
		t.Fatalf("%s is %d:%d %v, want %d:%d %v", path, st.Uid, st.Gid, got, uid, gid, mode)
	}
}

func instSum(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// instSnapshot lists every entry below dir with its type, mode, owner,
// size, modification time and content hash.
func instSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		sum := ""
		if fi.Mode().IsRegular() {
			sum = instSum(t, path)
		}
		fmt.Fprintf(&b, "%s %v %d:%d %d %d %s\n", path, fi.Mode(), st.Uid, st.Gid, fi.Size(), fi.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestInstallCurrentUser: where Bubblewrap works (or for a non-root user)
// the installer creates no account, installs for the current user and says
// what auto selects.
func TestInstallCurrentUser(t *testing.T) {
	if os.Geteuid() == 0 && sj(t, "", "doctor", "--execution-backend", "bubblewrap", "--json").code != 0 {
		t.Skip("Bubblewrap does not work for root here, so install would take the account path")
	}
	prefix := filepath.Join(t.TempDir(), "sj")
	account := "sjtest" + randomHex(t)[:6]
	r := instExec(t, env(), bin, "install", "--prefix", prefix, "--account", account, "--no-system-packages")
	if _, err := user.Lookup(account); err == nil {
		instAccountCleanup(t, account)
		t.Fatalf("a current-user install created the account %s", account)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "auto selects") || !strings.Contains(r.stdout, "current user") {
		t.Fatalf("install for the current user: %s", r)
	}
	if m := instMarker(t, prefix); m["mode"] != "user" {
		t.Fatalf("marker %v, want mode user", m)
	}
	if r := instExec(t, env(), filepath.Join(prefix, "bin", "simjecture"), "--help"); r.code != 0 {
		t.Fatalf("the launcher does not run the binary: %s", r)
	}
}
