package sandbox

import (
	"os"
	"strings"
	"testing"
)

// A runner's spare cgroup is the next run's: taken once, made again by
// refill, and removed for good when the runner stops; a run finding no
// spare makes its own.
func TestSpareCgroupIsTheNextRuns(t *testing.T) {
	requireRoot(t)
	s := newServer(os.Getppid())
	if s.cgroups.v2Dir == "" {
		t.Skip("no cgroup v2 hierarchy on this host")
	}
	own := s.takeCgroup(0, 1<<21+uint64(os.Getpid()))
	if own == nil {
		t.Fatalf("cannot create a cgroup under %s as root", s.cgroups.v2Dir)
	}
	defer own.remove()
	if strings.Contains(own.dir, "-s") {
		t.Errorf("with no spare, the run's own cgroup is %s", own.dir)
	}
	s.refillCgroup()
	spare := s.spareCg.cg
	if spare == nil {
		t.Fatal("refill made no spare")
	}
	got := s.takeCgroup(0, 2)
	if got != spare || got.kind() != ContainmentCgroupKill && got.kind() != ContainmentCgroup {
		t.Fatalf("took %+v, want the spare %+v", got, spare)
	}
	if s.spareCg.cg != nil {
		t.Error("the spare was not handed out once")
	}
	got.remove()
	if _, err := os.Stat(got.dir); !os.IsNotExist(err) {
		t.Errorf("the taken spare %s was not removed: %v", got.dir, err)
	}
	s.refillCgroup()
	next := s.spareCg.cg
	if next == nil || next.dir == spare.dir {
		t.Fatalf("second spare %+v", next)
	}
	s.dropSpareCgroup()
	s.refillCgroup()
	if _, err := os.Stat(next.dir); !os.IsNotExist(err) || s.spareCg.cg != nil {
		t.Errorf("after the runner stops: spare %s still there (%v), or made again (%+v)", next.dir, err, s.spareCg.cg)
	}
}
