package sandbox

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
	"time"
)

// devPy reports what the experiment's /dev holds and what its devices do.
const devPy = `import json, os
r = {"dev": {n: (os.readlink("/dev/" + n) if os.path.islink("/dev/" + n) else "dir" if os.path.isdir("/dev/" + n) else "char" if os.path.exists("/dev/" + n) else "?") for n in os.listdir("/dev")}}
with open("/dev/null", "w") as f:
    r["null"] = f.write("x")
r["zero"] = open("/dev/zero", "rb").read(4).hex()
r["urandom"] = len(open("/dev/urandom", "rb").read(16))
r["random"] = len(open("/dev/random", "rb").read(16))
try:
    with open("/dev/full", "w") as f:
        f.write("x")
    r["full"] = "written"
except OSError as e:
    r["full"] = e.strerror
r["stdout"] = os.write(os.open("/dev/stdout", os.O_WRONLY), b"to stdout\n")
def try_(f, *a):
    try:
        f(*a)
        return "done"
    except OSError as e:
        return e.strerror

r["host"] = [try_(os.chmod, "/dev/null", 0), try_(os.chmod, "/dev/urandom", 0), try_(os.unlink, "/dev/zero"),
    try_(os.rename, "/dev/full", "/dev/f")]
r["view"] = [try_(os.chmod, "/dev", 0o777), try_(os.symlink, "/work", "/dev/w"), try_(os.mkdir, "/dev/d"),
    try_(os.chmod, "/", 0o777), try_(os.mkdir, "/d"), try_(os.unlink, "/bin")]
for p in ("/big", "/dev/big"):
    try:
        with open(p, "wb") as f:
            f.write(b"x" * (2 << 20))
        r[p] = "written"
    except OSError as e:
        r[p] = e.strerror

json.dump(r, open("out/dev.json", "w"))
`

// Under Bubblewrap, /dev holds the null, zero, full and urandom devices,
// random as a link to urandom, the fd links and the shm folder, and each
// device works; there is no tty and no devpts. Nothing in / or /dev can be
// made, removed or changed in mode: on the root view (rootview.go) both
// are read-only (as root, /dev is writable at the mount but belongs to
// noOwner); on the tmpfs root that a read-only mount needs, neither takes
// more than a mebibyte (their pages would be memory no limit counts).
func TestBubblewrapDevHoldsItsDevices(t *testing.T) {
	requireRoot(t)
	want := map[string]string{"null": "char", "zero": "char", "full": "char", "urandom": "char", "random": "urandom",
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2", "shm": "dir"}
	const full, ro, denied = "No space left on device", "Read-only file system", "Permission denied"
	cases := []struct {
		name     string
		c        backendCase
		mount    bool
		big, dev string // what writing 2 MiB to /big and to /dev/big says
	}{
		{"root view", backendCases[0], false, ro, denied},
		{"root view", backendCases[1], false, ro, ro},
		{"tmpfs root", backendCases[0], true, full, denied},
		{"tmpfs root", backendCases[1], true, full, full},
	}
	before := devModes(t)
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.c.name, func(t *testing.T) {
			e := experiment{backend: tc.c.backend, asNobody: tc.c.asNobody, files: map[string]string{"sim.py": devPy, "out/.keep": ""},
				command: []string{"python3", "sim.py"}, outputs: []string{"out/dev.json"}}
			if tc.mount {
				e.readOnly = []Mount{{Host: "/usr/share/doc", Virtual: "/opt/doc"}}
			}
			res, spec, err := e.run(t)
			if err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 {
				t.Fatalf("err=%v rc=%v stderr=%s", err, res.ReturnCode, res.StderrTail)
			}
			var r struct {
				Dev                   map[string]string
				Null, Urandom, Random int
				Zero, Full            string
				Stdout                int
				Big                   string `json:"/big"`
				DevBig                string `json:"/dev/big"`
				Host, View            []string
			}
			must(t, json.Unmarshal([]byte(readArtifact(t, spec, "out/dev.json")), &r))
			if !maps.Equal(r.Dev, want) {
				t.Errorf("/dev holds %v, want %v", r.Dev, want)
			}
			if r.Null != 1 || r.Zero != "00000000" || r.Urandom != 16 || r.Random != 16 || r.Full != full || r.Stdout != 10 ||
				r.Big != tc.big || r.DevBig != tc.dev {
				t.Errorf("devices: %+v", r)
			}
			if slices.Contains(r.Host, "done") || len(r.Host) != 4 || slices.Contains(r.View, "done") && !tc.mount || len(r.View) != 6 {
				t.Errorf("changes to the host's devices %q or to the root view %q", r.Host, r.View)
			}
			if after := devModes(t); !maps.Equal(after, before) {
				t.Errorf("the host's devices were %v, are %v", before, after)
			}
			if res.StdoutTail != "to stdout\n" {
				t.Errorf("stdout log %q", res.StdoutTail)
			}
		})
	}
}

// devModes is the mode of each of the host's devNodes.
func devModes(t *testing.T) map[string]os.FileMode {
	modes := map[string]os.FileMode{}
	for _, d := range devNodes {
		info, err := os.Stat("/dev/" + d)
		must(t, err)
		modes[d] = info.Mode()
	}
	return modes
}

// Under Bubblewrap, files made in the sandbox's own tmpfs mounts (/dev/shm,
// and / and /dev on the tmpfs root a read-only mount needs) count as
// memory, a KiB each: they are kernel memory that no process's RSS shows
// and that --size does not bound. 120,000 empty files breach a 64 MiB
// limit; a thousand are nothing.
func TestBubblewrapCountsTmpfsFiles(t *testing.T) {
	requireRoot(t)
	const makeFiles = `import os, sys, time
n = int(sys.argv[1])
for i in range(n):
    open("%s/f%d" % (sys.argv[3], i), "w").close()
print("made", n, flush=True)
time.sleep(float(sys.argv[2]))
`
	cases := []struct {
		c     backendCase
		mount bool
		dir   string
	}{
		{backendCases[0], false, "/dev/shm"},
		{backendCases[1], false, "/dev/shm"},
		{backendCases[0], true, ""},
		{backendCases[1], true, "/dev"},
	}
	for _, tc := range cases {
		t.Run(tc.c.name+"/"+tc.dir+"/", func(t *testing.T) {
			e := experiment{backend: tc.c.backend, asNobody: tc.c.asNobody, files: map[string]string{"sim.py": makeFiles},
				command: []string{"python3", "sim.py", "120000", "30", tc.dir}, memory: 64 << 20, timeout: 20 * time.Second}
			if tc.mount {
				e.readOnly = []Mount{{Host: "/usr/share/doc", Virtual: "/opt/doc"}}
			}
			res, _, err := e.run(t)
			if err != nil || res.LimitExceeded != LimitMemory || res.TimedOut {
				t.Fatalf("120,000 files: err=%v limit=%q timed out=%v stdout=%q stderr=%q", err, res.LimitExceeded, res.TimedOut, res.StdoutTail, res.StderrTail)
			}
			e.command = []string{"python3", "sim.py", "1000", "0.3", tc.dir}
			res, _, err = e.run(t)
			if err != nil || res.LimitExceeded != "" || res.ReturnCode == nil || *res.ReturnCode != 0 {
				t.Fatalf("1,000 files: err=%v limit=%q rc=%v stderr=%q", err, res.LimitExceeded, res.ReturnCode, res.StderrTail)
			}
		})
	}
}
