package sandbox

import (
	"encoding/json"
	"maps"
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
// device works; there is no tty and no devpts. Neither / nor /dev takes
// more than a mebibyte (their pages would be memory no limit counts).
func TestBubblewrapDevHoldsItsDevices(t *testing.T) {
	requireRoot(t)
	want := map[string]string{"null": "char", "zero": "char", "full": "char", "urandom": "char", "random": "urandom",
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2", "shm": "dir"}
	for _, c := range backendCases[:2] {
		t.Run(c.name, func(t *testing.T) {
			e := experiment{backend: c.backend, asNobody: c.asNobody, files: map[string]string{"sim.py": devPy, "out/.keep": ""},
				command: []string{"python3", "sim.py"}, outputs: []string{"out/dev.json"}}
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
			}
			must(t, json.Unmarshal([]byte(readArtifact(t, spec, "out/dev.json")), &r))
			if !maps.Equal(r.Dev, want) {
				t.Errorf("/dev holds %v, want %v", r.Dev, want)
			}
			if r.Null != 1 || r.Zero != "00000000" || r.Urandom != 16 || r.Random != 16 || r.Full != "No space left on device" || r.Stdout != 10 ||
				r.Big != "No space left on device" || r.DevBig != "No space left on device" {
				t.Errorf("devices: %+v", r)
			}
			if res.StdoutTail != "to stdout\n" {
				t.Errorf("stdout log %q", res.StdoutTail)
			}
		})
	}
}

// Under Bubblewrap, files made in the sandbox's own tmpfs mounts (/, /dev,
// /dev/shm) count as memory, a KiB each: they are kernel memory that no
// process's RSS shows and that --size does not bound. 120,000 empty files
// in / breach a 64 MiB limit; a thousand are nothing.
func TestBubblewrapCountsTmpfsFiles(t *testing.T) {
	requireRoot(t)
	const makeFiles = `import os, sys, time
n = int(sys.argv[1])
for i in range(n):
    open("/f%d" % i, "w").close()
print("made", n, flush=True)
time.sleep(float(sys.argv[2]))
`
	for _, c := range backendCases[:2] {
		t.Run(c.name, func(t *testing.T) {
			e := experiment{backend: c.backend, asNobody: c.asNobody, files: map[string]string{"sim.py": makeFiles},
				command: []string{"python3", "sim.py", "120000", "30"}, memory: 64 << 20, timeout: 20 * time.Second}
			res, _, err := e.run(t)
			if err != nil || res.LimitExceeded != LimitMemory || res.TimedOut {
				t.Fatalf("120,000 files: err=%v limit=%q timed out=%v stdout=%q stderr=%q", err, res.LimitExceeded, res.TimedOut, res.StdoutTail, res.StderrTail)
			}
			e.command = []string{"python3", "sim.py", "1000", "0.3"}
			res, _, err = e.run(t)
			if err != nil || res.LimitExceeded != "" || res.ReturnCode == nil || *res.ReturnCode != 0 {
				t.Fatalf("1,000 files: err=%v limit=%q rc=%v stderr=%q", err, res.LimitExceeded, res.ReturnCode, res.StderrTail)
			}
		})
	}
}
