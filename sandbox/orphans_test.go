package sandbox

import (
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBirthTag: after tagForks, a process we fork carries our birth tag
// from its first instruction, before any setLimits, and keeps being found
// once setLimits gave it a run's tag; killTagged kills it either way (a
// bwrap sandbox child held in eventfd_read by a launcher that died before
// the runner limited it is such a process). Not parallel: it changes our
// own RLIMIT_RTTIME, which what other tests start would inherit.
func TestBirthTag(t *testing.T) {
	var saved unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_RTTIME, &saved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_RTTIME, &saved) })
	self := os.Getpid()
	if err := tagForks(self); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   uint64 // the run tag setLimits gives it; 0: none
	}{{"forked, not limited", 0}, {"limited as run 7", 7}} {
		t.Run(tc.name, func(t *testing.T) {
			pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
			if err != nil {
				t.Fatal(err)
			}
			want := uint64(self) << tagIDBits
			if tc.id > 0 {
				want |= tc.id
				if err := setLimits(pid, 0, 0, 0, want); err != nil {
					t.Fatal(err)
				}
			}
			if got := runTag(pid); got != want {
				t.Errorf("runTag = %#x, want %#x", got, want)
			}
			killTagged(self)
			_ = syscall.Kill(pid, syscall.SIGTERM) // ends it now if killTagged missed it
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
				t.Fatal(err)
			}
			if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Errorf("the tagged child ended %v, want killed by killTagged", ws)
			}
		})
	}
}
