// Package slurmfix starts a real single-node Slurm cluster for the
// end-to-end tests: its own munged (key, socket, seed and logs in a
// temporary folder), slurmctld and slurmd from the Debian packages
// (slurm-wlm 22.05, munge 0.5.15), a generated slurm.conf with ports picked
// free on loopback, and nothing outside that folder. No cgroup plugin is
// used (proctrack/linuxproc, task/none), so it runs on cgroup v1 hosts.
//
// Start waits until sinfo shows the node idle and registers a cleanup that
// cancels every job, waits for the queue to empty and stops the daemons.
// It skips the test, saying why, only when the packages are not installed
// (the test command installs them: scripts/deps.sh test) or the test is not
// root (slurmd must be).
package slurmfix

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Options shape the generated slurm.conf.
type Options struct {
	CPUs      int // CPUs the node declares (config_overrides: may exceed the host's); default 8
	MemoryMB  int // RealMemory of the node; default 16384
	MinJobAge int // seconds a finished job stays visible to squeue; default 300 (Slurm's)
}

// Cluster is a running test cluster.
type Cluster struct {
	Dir       string // everything the cluster writes lives here
	Conf      string // slurm.conf; clients find it through SLURM_CONF
	Socket    string // munged's socket
	Node      string // the one node's name
	Partition string // the default partition
	daemons   []*daemon
	logs      string // the daemons' log tails, kept by Stop
}

// daemon is one background process the cluster started.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// binaries are the programs Start needs, with the Debian package of each.
var binaries = [][2]string{
	{"munged", "munge"}, {"munge", "munge"}, {"slurmctld", "slurmctld"}, {"slurmd", "slurmd"},
	{"sbatch", "slurm-client"}, {"squeue", "slurm-client"}, {"sinfo", "slurm-client"},
	{"scancel", "slurm-client"}, {"srun", "slurm-client"},
}

// Start brings a cluster up for t and stops it when t ends.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	if why := Missing(); why != "" {
		t.Skip(why)
	}
	c, err := Launch(o)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Logf("%v", err)
		}
		if t.Failed() {
			t.Logf("slurmfix logs:\n%s", c.logs)
		}
	})
	return c
}

// Missing says why no cluster can be started here ("" when one can): the
// packages are not installed, or this process is not root.
func Missing() string {
	var missing []string
	for _, b := range binaries {
		if _, err := exec.LookPath(b[0]); err != nil {
			missing = append(missing, b[1])
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("slurmfix: Slurm is not installed (missing packages %s; `go tool task test-deps` installs them as root)", strings.Join(missing, " "))
	}
	if os.Geteuid() != 0 {
		return "slurmfix: slurmd must run as root; this process is not root"
	}
	return ""
}

// Launch starts a cluster and waits until its node is idle; Stop ends it.
func Launch(o Options) (*Cluster, error) {
	c, err := newCluster(o)
	if err == nil {
		err = c.start()
	}
	if err != nil {
		tail := ""
		if c != nil {
			tail = c.tails()
			_ = c.Stop()
		}
		return nil, fmt.Errorf("slurmfix: %w\n%s", err, tail)
	}
	return c, nil
}

func newCluster(o Options) (*Cluster, error) {
	if o.CPUs == 0 {
		o.CPUs = 8
	}
	if o.MemoryMB == 0 {
		o.MemoryMB = 16384
	}
	if o.MinJobAge == 0 {
		o.MinJobAge = 300
	}
	// munged wants every folder above its socket searchable by all, so the
	// cluster folder is made 0755 under /tmp rather than in t.TempDir (0700).
	dir, err := os.MkdirTemp("/tmp", "slurmfix-")
	if err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), Socket: filepath.Join(dir, "run", "munge.sock"),
		Node: strings.SplitN(host, ".", 2)[0], Partition: "debug"}
	if err := c.layout(); err != nil {
		return c, err
	}
	return c, c.writeConf(o)
}

// layout makes the folders and the munge key.
func (c *Cluster) layout() error {
	if err := os.Chmod(c.Dir, 0o755); err != nil {
		return err
	}
	for d, mode := range map[string]os.FileMode{"run": 0o755, "munge": 0o700, "state": 0o700, "spool": 0o755, "log": 0o755, "shared": 0o777} {
		if err := os.Mkdir(filepath.Join(c.Dir, d), mode); err != nil {
			return err
		}
		if err := os.Chmod(filepath.Join(c.Dir, d), mode); err != nil { // past the umask
			return err
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	return os.WriteFile(c.path("munge", "munge.key"), key, 0o400)
}

func (c *Cluster) path(parts ...string) string {
	return filepath.Join(append([]string{c.Dir}, parts...)...)
}

// Shared is a folder every job can read and write (the SHARED_DIR of a
// worker on this cluster).
func (c *Cluster) Shared() string { return c.path("shared") }

func (c *Cluster) writeConf(o Options) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	conf := fmt.Sprintf(confTemplate, ports[0], ports[1], c.Socket,
		c.path("state"), c.path("spool"), c.path("slurmctld.pid"), c.path("slurmd.pid"),
		c.path("log", "slurmctld.log"), c.path("log", "slurmd.log"), c.path("log", "jobcomp.txt"),
		o.MinJobAge, c.Node, o.CPUs, o.MemoryMB, c.Partition, c.Node)
	return os.WriteFile(c.Conf, []byte(conf), 0o644)
}

// confTemplate is the cluster's slurm.conf: root runs both daemons, munge
// authenticates through our socket, no cgroup plugin, no accounting
// database (finished jobs are logged by jobcomp/filetxt), and a short
// KillWait so scancel and time limits act within seconds.
const confTemplate = `ClusterName=simjecture-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%s
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=%s
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=%d
InactiveLimit=0
SchedulerType=sched/backfill
NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d State=UNKNOWN
PartitionName=%s Nodes=%s Default=YES MaxTime=INFINITE State=UP
`

// freePorts returns n TCP ports free on loopback right now.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Env is the environment a Slurm client needs for this cluster: the
// caller's own plus SLURM_CONF.
func (c *Cluster) Env() []string {
	return append(os.Environ(), "SLURM_CONF="+c.Conf)
}

// Run runs a Slurm client command against the cluster and returns its
// standard output; an error carries its standard error.
func (c *Cluster) Run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// start runs munged, slurmctld and slurmd and waits for the node to be idle.
func (c *Cluster) start() error {
	if err := c.spawn("munged", "munged", "--foreground", "--socket="+c.Socket,
		"--key-file="+c.path("munge", "munge.key"), "--pid-file="+c.path("munge", "munged.pid"),
		"--log-file="+c.path("munge", "munged.log"), "--seed-file="+c.path("munge", "munged.seed")); err != nil {
		return err
	}
	if err := c.until(20*time.Second, "munged answers", c.mungeWorks); err != nil {
		return err
	}
	if err := c.spawn("slurmctld", "slurmctld", "-D", "-i", "-f", c.Conf); err != nil {
		return err
	}
	if err := c.spawn("slurmd", "slurmd", "-D", "-N", c.Node, "-f", c.Conf); err != nil {
		return err
	}
	return c.until(60*time.Second, "node "+c.Node+" idle in sinfo", c.nodeIdle)
}
