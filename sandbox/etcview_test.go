package sandbox

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeEtc makes a host /etc of its own: some etcItems (files, a folder of
// symlinks with a FIFO, a folder of files, a top-level symlink), one item
// missing, and files that must never be shown. many says which folder holds
// more than etcCopyMax entries: "symlinks" (alternatives), "files"
// (ld.so.conf.d) or neither ("").
func fakeEtc(t *testing.T, many string) string {
	t.Helper()
	src := t.TempDir()
	for name, body := range map[string]string{
		"passwd": "root:x:0:0::/root:/bin/sh\n", "group": "root:x:0:\n", "ld.so.cache": "cache",
		"shadow": "root:secret\n", "hostname": "host\n", "ld.so.conf.d/a.conf": "/usr/local/lib\n",
	} {
		p := filepath.Join(src, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
	must(t, os.Chmod(filepath.Join(src, "group"), 0o640))
	must(t, os.Mkdir(filepath.Join(src, "alternatives"), 0o755))
	must(t, os.Symlink("/usr/bin/python3", filepath.Join(src, "alternatives", "python")))
	must(t, syscall.Mkfifo(filepath.Join(src, "alternatives", "fifo"), 0o644))
	must(t, os.Symlink("/usr/share/zoneinfo/Etc/UTC", filepath.Join(src, "localtime")))
	for i := 0; i < etcCopyMax; i++ {
		switch name := "x" + strconv.Itoa(i); many {
		case "symlinks":
			must(t, os.Symlink("/usr/bin/true", filepath.Join(src, "alternatives", name)))
		case "files":
			must(t, os.WriteFile(filepath.Join(src, "ld.so.conf.d", name+".conf"), nil, 0o644))
		}
	}
	return src
}

// tree lists every path under dir with its type, mode and content or target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		desc := info.Mode().String()
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			must(t, err)
			desc += " " + string(b)
		}
		out[rel] = desc
		return nil
	}))
	return out
}

// The view holds the items and only them; an item folder with more than
// etcCopyMax entries (symlinks or files) is an empty folder of the view, to
// be bound over.
func TestEtcViewCopiesOnlyTheItems(t *testing.T) {
	for _, many := range []string{"", "symlinks", "files"} {
		t.Run("many="+many, func(t *testing.T) {
			src := fakeEtc(t, many)
			views := etcViews{src: src, byParent: map[string]*etcView{}}
			v, err := views.acquire(t.TempDir())
			must(t, err)
			defer views.release(v)
			want := tree(t, src)
			for rel := range want {
				if rel == "shadow" || rel == "hostname" || rel == "alternatives/fifo" || many == "files" && filepath.Dir(rel) == "ld.so.conf.d" || many == "symlinks" && filepath.Dir(rel) == "alternatives" {
					delete(want, rel)
				}
			}
			if got := tree(t, v.dir); !maps.Equal(got, want) {
				t.Errorf("view holds %v, want %v", got, want)
			}
			wantBinds := map[string][]string{"files": {filepath.Join(src, "ld.so.conf.d")}, "symlinks": {filepath.Join(src, "alternatives")}}[many]
			if !slices.Equal(v.binds, wantBinds) {
				t.Errorf("folders bound on their own: %v, want %v", v.binds, wantBinds)
			}
			if info, err := os.Stat(v.dir); err != nil || info.Mode().Perm() != 0o555 {
				t.Errorf("view folder: %v %v, want mode 0555", info, err)
			}
		})
	}
}

func TestEtcViewIsRemadeWhenHostOrCopyChanges(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, src, view string)
		remade bool
	}{
		{"nothing changed", func(*testing.T, string, string) {}, false},
		{"host file edited in place", func(t *testing.T, src, _ string) { appendTo(t, filepath.Join(src, "passwd")) }, true},
		{"host file inside a folder edited", func(t *testing.T, src, _ string) { appendTo(t, filepath.Join(src, "ld.so.conf.d", "a.conf")) }, true},
		{"host item appears", func(t *testing.T, src, _ string) {
			must(t, os.WriteFile(filepath.Join(src, "nsswitch.conf"), []byte("passwd: files\n"), 0o644))
		}, true},
		{"host symlink in a folder replaced", func(t *testing.T, src, _ string) {
			alt := filepath.Join(src, "alternatives")
			must(t, os.Symlink("/usr/bin/python3.11", filepath.Join(alt, "new")))
			must(t, os.Rename(filepath.Join(alt, "new"), filepath.Join(alt, "python")))
		}, true},
		{"host mode changed", func(t *testing.T, src, _ string) { must(t, os.Chmod(filepath.Join(src, "passwd"), 0o600)) }, true},
		{"copy rewritten", func(t *testing.T, _, view string) { appendTo(t, filepath.Join(view, "passwd")) }, true},
		{"copy removed", func(t *testing.T, _, view string) { removeTree(view) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := fakeEtc(t, "")
			views := etcViews{src: src, byParent: map[string]*etcView{}}
			parent := t.TempDir()
			first, err := views.acquire(parent)
			must(t, err)
			views.release(first)
			c.change(t, src, first.dir)
			second, err := views.acquire(parent)
			must(t, err)
			defer views.release(second)
			if remade := second.dir != first.dir; remade != c.remade {
				t.Fatalf("remade %v, want %v", remade, c.remade)
			}
			if _, err := os.Lstat(first.dir); c.remade && err == nil {
				t.Errorf("the replaced view %s is still there", first.dir)
			}
			want, got := tree(t, src), tree(t, second.dir)
			for _, rel := range []string{"passwd", "nsswitch.conf", "ld.so.conf.d/a.conf", "alternatives/python"} {
				if want[rel] != got[rel] {
					t.Errorf("%s: view %q, host %q", rel, got[rel], want[rel])
				}
			}
		})
	}
}

func appendTo(t *testing.T, path string) {
	t.Helper()
	must(t, os.Chmod(path, 0o644))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("extra:x:1:1::/:/bin/sh\n")
	must(t, err)
	must(t, f.Close())
}

// A view replaced while a launch still holds it stays until that launch
// lets go; settle removes the rest.
func TestEtcViewKeptWhileHeld(t *testing.T) {
	src := fakeEtc(t, "")
	views := etcViews{src: src, byParent: map[string]*etcView{}}
	parent := t.TempDir()
	held, err := views.acquire(parent)
	must(t, err)
	appendTo(t, filepath.Join(src, "passwd"))
	next, err := views.acquire(parent)
	must(t, err)
	if _, err := os.Lstat(held.dir); err != nil || next.dir == held.dir {
		t.Fatalf("held view %s: %v; next %s", held.dir, err, next.dir)
	}
	views.release(held)
	if _, err := os.Lstat(held.dir); err == nil {
		t.Error("the replaced view outlived its last user")
	}
	views.release(next)
	views.settle()
	if names, _ := readDirNames(parent); len(names) != 0 {
		t.Errorf("after settle the parent holds %v", names)
	}
}

const etcPy = `import json, os
r = {"etc": sorted(os.listdir("/etc")), "passwd": open("/etc/passwd").read(),
     "alternatives": sorted(os.listdir("/etc/alternatives")) if os.path.isdir("/etc/alternatives") else None}
for p in ("/etc/x", "/etc/passwd"):
    try:
        open(p, "a").close()
        r[p] = "ok"
    except OSError as e:
        r[p] = e.strerror
json.dump(r, open("out/etc.json", "w"))
`

// Under Bubblewrap, /etc holds exactly the host's etcItems with the host's
// bytes, and nothing in it can be written.
func TestBubblewrapEtcIsTheHostsItemsReadOnly(t *testing.T) {
	requireRoot(t)
	var want []string
	for _, name := range etcItems {
		if _, err := os.Lstat("/etc/" + name); err == nil {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	hostPasswd, err := os.ReadFile("/etc/passwd")
	must(t, err)
	hostAlts, _ := readDirNames("/etc/alternatives")
	slices.Sort(hostAlts)
	for _, c := range backendCases[:2] {
		t.Run(c.name, func(t *testing.T) {
			e := experiment{backend: c.backend, asNobody: c.asNobody, files: map[string]string{"sim.py": etcPy, "out/.keep": ""},
				command: []string{"python3", "sim.py"}, outputs: []string{"out/etc.json"}}
			res, spec, err := e.run(t)
			if err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 {
				t.Fatalf("err=%v rc=%v stderr=%s", err, res.ReturnCode, res.StderrTail)
			}
			var r map[string]any
			must(t, json.Unmarshal([]byte(readArtifact(t, spec, "out/etc.json")), &r))
			if got := stringList(r["etc"]); !slices.Equal(got, want) {
				t.Errorf("/etc holds %v, want %v", got, want)
			}
			if r["passwd"] != string(hostPasswd) || !slices.Equal(stringList(r["alternatives"]), hostAlts) {
				t.Errorf("passwd or alternatives differ from the host's: %v", r)
			}
			if r["/etc/x"] == "ok" || r["/etc/passwd"] == "ok" {
				t.Errorf("/etc writable: %v %v", r["/etc/x"], r["/etc/passwd"])
			}
		})
	}
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// The launch line binds the prepared root view at / and no /etc item on
// its own but the large folders; a run with a read-only mount binds the
// view's etc/ at /etc on a tmpfs root instead.
func TestBwrapLaunchBindsOneEtcView(t *testing.T) {
	if _, err := bwrapPath(); err != nil {
		t.Skip("no bwrap: " + err.Error())
	}
	for _, withMount := range []bool{false, true} {
		t.Run(fmt.Sprint("read-only mount=", withMount), func(t *testing.T) {
			spec := experiment{backend: Bubblewrap, command: []string{"true"}}.spec(t)
			if withMount {
				spec.ReadOnly = []Mount{{Host: "/usr/share", Virtual: "/opt/share"}}
			}
			spec, err := normalize(spec)
			must(t, err)
			cfg, err := helperFor(spec, newLayout(spec.RunDir))
			must(t, err)
			if cfg.release == nil {
				t.Fatal("no view was taken")
			}
			defer cfg.release()
			etcCopies.mu.Lock()
			v := etcCopies.byParent[filepath.Dir(spec.RunDir)]
			etcCopies.mu.Unlock()
			want := []string{"--ro-bind " + v.root + " /"}
			if withMount {
				want = []string{"--tmpfs /", "--ro-bind " + v.dir + " /etc"}
			}
			for _, p := range v.binds {
				want = append(want, "--ro-bind "+p+" /etc/"+filepath.Base(p))
			}
			if got := viewBinds(cfg.Argv); !slices.Equal(got, want) {
				t.Errorf("/ and /etc on the launch line: %q, want %q", got, want)
			}
		})
	}
}

// viewBinds lists the steps of argv that mount at / or at /etc or in it.
func viewBinds(argv []string) []string {
	arity := map[string]int{"--ro-bind": 2, "--bind": 2, "--dev-bind": 2, "--symlink": 2, "--setenv": 2,
		"--tmpfs": 1, "--proc": 1, "--dir": 1, "--size": 1, "--perms": 1, "--chdir": 1, "--cap-drop": 1}
	var binds []string
	for i := 1; i < len(argv) && argv[i] != "--"; i++ {
		n := arity[argv[i]]
		if n == 0 || i+n >= len(argv) {
			continue
		}
		if dst := argv[i+n]; argv[i] != "--setenv" && (dst == "/" || dst == "/etc" || filepath.Dir(dst) == "/etc") {
			binds = append(binds, strings.Join(argv[i:i+n+1], " "))
		}
		i += n
	}
	return binds
}

// With the view's watch, a check after no change reads no stamp, and every
// kind of change is still seen: through a system call at once, through a
// shared mapping (which raises no inotify event) within fullEvery.
func TestEtcViewWatchSeesChanges(t *testing.T) {
	src := fakeEtc(t, "")
	views := etcViews{src: src, byParent: map[string]*etcView{}}
	v, err := views.acquire(t.TempDir())
	must(t, err)
	defer views.release(v)
	if v.watch == nil {
		t.Skip("no inotify here")
	}
	if !v.fresh() || !v.watch.quiet() {
		t.Fatal("an unchanged view is not fresh, or its watch saw something")
	}
	// Names that no stamp concerns come and go beside the view and in /etc
	// (every run renames folders in the view's parent): the watch stays quiet.
	parent := filepath.Dir(v.root)
	must(t, os.Mkdir(filepath.Join(parent, "run-1"), 0o700))
	must(t, os.Rename(filepath.Join(parent, "run-1"), filepath.Join(parent, ".scrap-1")))
	must(t, os.WriteFile(filepath.Join(src, "motd"), nil, 0o644))
	if !v.watch.quiet() {
		t.Fatal("the watch counted names no stamp concerns")
	}
	// A symlink made in a stamped folder (as update-alternatives does) is seen.
	must(t, os.Symlink("/usr/bin/true", filepath.Join(src, "alternatives", "awk")))
	if v.fresh() {
		t.Fatal("the watch missed a symlink made in a stamped folder")
	}
	v, err = views.acquire(t.TempDir()) // a fresh view again for what follows
	must(t, err)
	defer views.release(v)
	if !v.fresh() || !v.watch.quiet() {
		t.Fatal("a new view is not fresh, or its watch saw something")
	}
	passwd := filepath.Join(src, "passwd")
	must(t, os.Chmod(passwd, 0o600))
	if v.watch.quiet() {
		t.Fatal("the watch missed a chmod")
	}
	must(t, os.Chmod(passwd, 0o644))
	_ = v.fresh() // drains; the mode is back but the ctime moved: stale
	f, err := os.OpenFile(filepath.Join(src, "group"), os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	must(t, err)
	defer syscall.Munmap(m)
	v2, err := views.acquire(t.TempDir())
	must(t, err)
	defer views.release(v2)
	if !v2.fresh() || !v2.watch.quiet() { // the first check of a new view is a full one
		t.Fatal("a new view is not fresh, or its watch saw something")
	}
	m[0] = 'X'
	waitFor(t, "a write through a shared mapping to be seen", 5*time.Second, func() bool { return !v2.fresh() })
}
