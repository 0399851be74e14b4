package sandbox

import (
	"strings"
	"testing"
)

// shmScripts are experiments on /dev/shm (Python).
const (
	// shmPastTheCap reports the tmpfs's size, asks for more than it at once
	// (posix_fallocate: ENOSPC before any page is taken), then fills it by
	// writing and waits: the watchdog must stop it for memory.
	shmPastTheCap = `import errno, os, time
st = os.statvfs('/dev/shm')
cap = st.f_blocks * st.f_frsize
print('cap', cap, flush=True)
fd = os.open('/dev/shm/big', os.O_CREAT | os.O_WRONLY, 0o600)
try:
    os.posix_fallocate(fd, 0, cap + (1 << 20))
    print('fallocate past the cap took it', flush=True)
except OSError as e:
    print('fallocate', errno.errorcode[e.errno], flush=True)
try:
    while True:
        os.write(fd, b'x' * (1 << 20))
except OSError as e:
    print('write', errno.errorcode[e.errno], flush=True)
time.sleep(30)
`
	// shmFillAndFail is the audit's experiment: it writes 1.5 GiB to
	// /dev/shm and ends at once of the ENOSPC, maybe before a sample sees
	// the tmpfs full.
	shmFillAndFail = `f = open('/dev/shm/x', 'wb')
for i in range(1536):
    f.write(b'\1' * (1 << 20))
`
	// shmHeld writes 150 MiB to a /dev/shm file (1 MiB at a time: a
	// buffer of it all would be memory too), maps and reads it when told
	// to, and holds it half a second.
	shmHeld = `import mmap, os, sys, time
n = 150 << 20
fd = os.open('/dev/shm/held', os.O_CREAT | os.O_RDWR, 0o600)
chunk = b'y' * (1 << 20)
for _ in range(n >> 20):
    os.write(fd, chunk)
if sys.argv[1] == 'map':
    m = mmap.mmap(fd, n)
    s = sum(m[i] for i in range(0, n, 4096))
time.sleep(0.5)
print('held', flush=True)
`
)

// TestShmUnderBubblewrap: the experiment's /dev/shm is a tmpfs of its own
// capped at the memory limit: asking for more fails with ENOSPC, filling it
// is a memory breach (no longer succeeded with a tiny peak), also when the
// experiment ends of the ENOSPC before a sample sees it full, and what it
// holds counts once whether or not it is mapped.
func TestShmUnderBubblewrap(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name    string
		command []string
		memory  int64
		limit   string
		stdout  []string
		minPeak int64
	}{
		{"past the cap", []string{"python3", "-c", shmPastTheCap}, 64 << 20, LimitMemory,
			[]string{"cap 67108864", "fallocate ENOSPC"}, 64 << 20},
		{"filled, ended of ENOSPC", []string{"python3", "-c", shmFillAndFail}, 256 << 20, LimitMemory, nil, 256 << 20},
		{"written, not mapped", []string{"python3", "-c", shmHeld, "write"}, 256 << 20, "", []string{"held"}, 150 << 20},
		{"mapped, counted once", []string{"python3", "-c", shmHeld, "map"}, 256 << 20, "", []string{"held"}, 150 << 20},
	}
	for _, c := range cases {
		for _, bc := range backendCases[:2] { // bubblewrap as root and as nobody
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				e := experiment{backend: bc.backend, asNobody: bc.asNobody, command: c.command, memory: c.memory}
				res, _, err := e.run(t)
				must(t, err)
				peak := int64(0)
				if res.PeakRSSBytes != nil {
					peak = *res.PeakRSSBytes
				}
				t.Logf("limit %q, peak %d MiB, wall %.2f s, stdout %q", res.LimitExceeded, peak>>20, res.WallSeconds, res.StdoutTail)
				if res.LimitExceeded != c.limit || peak < c.minPeak || peak > max(c.memory, c.minPeak)+64<<20 {
					t.Fatalf("limit %q peak %d, want limit %q and a peak from %d; stderr %s", res.LimitExceeded, peak, c.limit, c.minPeak, res.StderrTail)
				}
				for _, w := range c.stdout {
					if !strings.Contains(res.StdoutTail, w) {
						t.Errorf("stdout %q lacks %q", res.StdoutTail, w)
					}
				}
			})
		}
	}
}
