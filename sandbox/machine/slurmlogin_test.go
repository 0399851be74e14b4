package machine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/slurm"
)

// localShell runs a login node's command line with this host's sh, as the
// login shell does with ssh's remote command.
type localShell struct{ dir string }

func (s localShell) command(ctx context.Context, remote string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", remote)
	cmd.Dir = s.dir
	return cmd, nil
}

func (localShell) explain(err error, stderr string) error {
	return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr))
}

// TestLoginCommandQuoting: every argument reaches the remote command as
// one word, unexpanded, whatever it holds.
func TestLoginCommandQuoting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"plain", "a b", "it's", `"dq"`, "$(touch pwned)", "`touch pwned`", "*", "-n", "", "line\nbreak", `back\slash`, "; touch pwned"}
	out, err := loginExec{l: login{sh: localShell{dir: dir}, host: "test"}}.Output(context.Background(), "printf", append([]string{`%s\0`}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(args, "|") {
		t.Errorf("remote words %q, want %q", got, args)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("an argument was run as a command")
	}
	if _, err := (loginExec{l: login{sh: localShell{dir: dir}, host: "test"}}).Output(context.Background(), "false"); err == nil || !strings.Contains(err.Error(), "false on test") {
		t.Errorf("a failed remote command: %v, want an error naming it and the host", err)
	}
}

// TestLoginFilesMatchLocal: the login node's Files behave as the local
// ones: atomic writes, a missing file is fs.ErrNotExist, Put and Get refuse
// bytes whose hash is not the recorded one and leave nothing behind.
func TestLoginFilesMatchLocal(t *testing.T) {
	t.Parallel()
	impls := map[string]slurm.Files{"local": slurm.LocalFiles{}, "login": loginFiles{l: login{sh: localShell{dir: "/"}, host: "test"}}}
	for name, files := range impls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkFiles(t, files, t.TempDir())
		})
	}
}

func checkFiles(t *testing.T, files slurm.Files, dir string) {
	shared := filepath.Join(dir, "shared dir's")
	p := filepath.Join(shared, "jobs", "a", "spec.json")
	if _, err := files.ReadFile(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read of a missing file: %v, want fs.ErrNotExist", err)
	}
	if err := files.WriteFile(p, []byte("{\"x\":1}\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if data, err := files.ReadFile(p); err != nil || string(data) != "{\"x\":1}\n" {
		t.Errorf("read back %q, %v", data, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("written mode: %v %v, want 0755", fi.Mode(), err)
	}
	src := filepath.Join(dir, "input")
	if err := os.WriteFile(src, []byte("sealed"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _, _ := sandbox.HashFile(src)
	dst := filepath.Join(shared, "jobs", "a", "inputs", sum)
	if err := files.Put(src, dst, 0o444, strings.Repeat("0", 64)); !errors.Is(err, slurm.ErrHashMismatch) && (err == nil || !strings.Contains(err.Error(), "sha256 mismatch")) {
		t.Errorf("put with a wrong hash: %v, want a sha256 mismatch", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("a put with a wrong hash left its file")
	}
	if err := files.Put(src, dst, 0o444, sum); err != nil {
		t.Fatal(err)
	}
	if got, err := files.Sum(dst); err != nil || got != sum {
		t.Errorf("sum %q %v, want %s", got, err, sum)
	}
	back := filepath.Join(dir, "campaign", "out.txt")
	if err := files.Get(dst, back, 0o444, strings.Repeat("f", 64)); !errors.Is(err, slurm.ErrHashMismatch) {
		t.Errorf("get with a wrong hash: %v, want ErrHashMismatch", err)
	}
	if err := files.Get(dst, back, 0o444, sum); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(back); string(data) != "sealed" {
		t.Errorf("got %q back", data)
	}
	if err := files.Get(filepath.Join(shared, "missing"), back+".2", 0o644, ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("get of a missing file: %v, want fs.ErrNotExist", err)
	}
	checkTouch(t, files, filepath.Join(shared, "jobs", "b", "heartbeat"))
	checkNoParts(t, dir)
}

func checkTouch(t *testing.T, files slurm.Files, beat string) {
	if err := files.Touch(beat); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(beat, old, old); err != nil {
		t.Fatal(err)
	}
	if err := files.Touch(beat); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(beat); err != nil || !fi.ModTime().After(old.Add(30*time.Minute)) {
		t.Errorf("touch left the heartbeat at %v (%v)", fi.ModTime(), err)
	}
}

func checkNoParts(t *testing.T, dir string) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".part-") {
			t.Errorf("temporary file left: %s", path)
		}
		return nil
	})
}
