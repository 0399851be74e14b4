package slurm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

func TestParseRows(t *testing.T) {
	got := map[string]jobState{}
	parseRows("12|RUNNING|vm|None\n13|PENDING||Resources\n14|CANCELLED by 0|vm|None\nbroken\n", got)
	want := map[string]jobState{
		"12": {Known: true, State: "RUNNING", Node: "vm", Reason: "None"},
		"13": {Known: true, State: "PENDING", Reason: "Resources"},
		"14": {Known: true, State: "CANCELLED", Node: "vm", Reason: "None"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %+v, want %+v", id, got[id], w)
		}
	}
}

func TestStateStatus(t *testing.T) {
	cases := []struct{ state, status, reason string }{
		{"TIMEOUT", TimedOut, "time limit"},
		{"DEADLINE", TimedOut, "time limit"},
		{"CANCELLED", Cancelled, "outside the study"},
		{"NODE_FAIL", Interrupted, "ended NODE_FAIL without a terminal record"},
		{"COMPLETED", Interrupted, "ended COMPLETED without a terminal record"},
		{"FAILED", Interrupted, "ended FAILED"},
	}
	for _, c := range cases {
		status, reason := stateStatus("7", jobState{Known: true, State: c.state})
		if status != c.status || !strings.Contains(reason, c.reason) || !strings.Contains(reason, "job 7") {
			t.Errorf("%s: %s %q, want %s containing %q", c.state, status, reason, c.status, c.reason)
		}
	}
}

func TestWaiterWithoutRecord(t *testing.T) {
	cases := []struct {
		name      string
		states    []jobState
		cancelled bool
		status    string
	}{
		{"vanished", []jobState{{Known: true, State: "RUNNING"}, {}}, false, Interrupted},
		{"failed poll is no news", []jobState{{Known: true, State: "RUNNING"}, {Known: true}}, false, ""},
		{"timeout", []jobState{{Known: true, State: "TIMEOUT"}}, false, TimedOut},
		{"our cancel", []jobState{{Known: true, State: "CANCELLED"}}, true, ""},
	}
	for _, c := range cases {
		w := waiter{c: &Cluster{cfg: Config{Backend: sandbox.Bubblewrap}}, id: "9", cancelled: c.cancelled}
		for _, st := range c.states {
			w.observe(st)
		}
		if c.name == "failed poll is no news" {
			if w.ended != nil {
				t.Errorf("%s: a running job read as ended", c.name)
			}
			continue
		}
		o := w.without()
		if w.ended == nil || o.Status != c.status || o.Result.Cancelled != c.cancelled {
			t.Errorf("%s: ended %v, outcome %q cancelled %v; want %q %v", c.name, w.ended != nil, o.Status, o.Result.Cancelled, c.status, c.cancelled)
		}
	}
}

func TestSlurmTime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:01", time.Second: "0:01", 1500 * time.Millisecond: "0:02", 11 * time.Minute: "11:00",
		-time.Hour: "0:01", 61*time.Minute + 5*time.Second: "61:05",
	} {
		if got := slurmTime(d); got != want {
			t.Errorf("slurmTime(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestSbatchArgs(t *testing.T) {
	c := &Cluster{cfg: Config{Partition: "gpu", Account: "proj", TimeMargin: time.Minute}}
	f := jobFolder{dir: "/shared/jobs/sj_1", name: "sj_1"}
	got := c.sbatchArgs(f, sandbox.Spec{CPUs: 2, MemoryBytes: 4096 << 20, Timeout: 10 * time.Minute})
	for _, want := range []string{"--parsable", "--job-name=sj_1", "--cpus-per-task=2", "--mem=4096M", "--time=11:00",
		"--partition=gpu", "--account=proj", "--output=/shared/jobs/sj_1/slurm.out", "--error=/shared/jobs/sj_1/slurm.err"} {
		if !slices.Contains(got, want) {
			t.Errorf("sbatch args %v lack %s", got, want)
		}
	}
	if got[len(got)-1] != "/shared/jobs/sj_1/job.sh" {
		t.Errorf("the script is not last: %v", got)
	}
}

func TestPickPartition(t *testing.T) {
	sinfo := "debug*|up\ngpu|down\nlong|up\n"
	cases := []struct{ want, got, err string }{
		{"", "debug", ""},
		{"long", "long", ""},
		{"gpu", "", "gpu is down, not up"},
		{"nope", "", "nope does not exist (partitions: debug, gpu, long)"},
	}
	for _, c := range cases {
		got, err := pickPartition(sinfo, c.want)
		if got != c.got || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("pick %q: %q %v, want %q %q", c.want, got, err, c.got, c.err)
		}
	}
	if _, err := pickPartition("a|up\n", ""); err == nil || !strings.Contains(err.Error(), "no default partition") {
		t.Errorf("no default: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	good := Config{Root: "/shared/sj", Backend: sandbox.Bubblewrap, Self: "/bin/true"}
	cases := map[string]func(*Config){
		"relative root": func(c *Config) { c.Root = "shared" },
		"root /":        func(c *Config) { c.Root = "/" },
		"backend":       func(c *Config) { c.Backend = "nope" },
		"binary":        func(c *Config) { c.Self = "" },
	}
	if _, err := New(good); err != nil {
		t.Fatalf("good config: %v", err)
	}
	for name, mod := range cases {
		cfg := good
		mod(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	t.Setenv(EnvTimeMargin, "soon")
	if _, err := New(good); err == nil || !strings.Contains(err.Error(), EnvTimeMargin) {
		t.Errorf("bad $%s: %v", EnvTimeMargin, err)
	}
}

// TestLocalFilesRemoveAll: a job folder goes whole, read-only parts
// included; a folder already gone is no error.
func TestLocalFilesRemoveAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jobs", "sj_x")
	in := filepath.Join(dir, "inputs", "sub")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "f"), []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(in, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := (LocalFiles{}).RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", dir, err)
	}
	if err := (LocalFiles{}).RemoveAll(dir); err != nil {
		t.Errorf("removing a missing folder: %v", err)
	}
}
