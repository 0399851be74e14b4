package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// The proot-cooperative backend: the same path view through PRoot, as this
// account; not a security sandbox.

// prootPath finds proot: $SIMJECTURE_PROOT, else "proot" on PATH.
func prootPath() (string, error) { return launcherPath(EnvProot, "proot") }

func probeProot(ctx context.Context) Report {
	r := Report{Backend: ProotCooperative}
	if os.Geteuid() == 0 {
		r.Reason, r.Remedy = ReasonUnprivileged, RemedyUnprivileged
		return r
	}
	proot, err := prootPath()
	if err != nil {
		r.Reason, r.Remedy = "Missing proot executable", RemedyProot
		return r
	}
	r.Available, r.Reason = runProbe(ctx, proot, "-r", "/", "/usr/bin/true")
	if !r.Available {
		r.Remedy = RemedyProot
	}
	return r
}

// launchProot builds the private root and the PRoot command line.
func launchProot(s Spec, lay layout, cfg *helperConfig) error {
	proot, err := prootPath()
	if err != nil {
		return err
	}
	argv, err := prootArgv(proot, s, lay)
	cfg.Argv, cfg.Env, cfg.ProotStatus = argv, envList(sandboxEnv(s)), true
	// PRoot writes its loader to a temporary file under the same limit.
	cfg.FsizeLimit = max(cfg.FsizeLimit, prootMinFileBytes)
	return err
}

// prootArgv builds the private root folder and the PRoot command line.
func prootArgv(proot string, s Spec, lay layout) ([]string, error) {
	a := []string{proot, "-r", lay.root, "-w", VirtualWork}
	for _, d := range []string{"etc", "dev", "proc", "tmp", "work"} {
		if err := os.MkdirAll(filepath.Join(lay.root, d), 0o755); err != nil {
			return nil, fmt.Errorf("proot root: %w", err)
		}
	}
	for _, e := range systemView() {
		if err := prootEntry(lay.root, e); err != nil {
			return nil, err
		}
		if e.symlink == "" {
			a = append(a, "-b", e.src+":"+e.dst)
		}
	}
	a = append(a, "-b", "/dev:/dev", "-b", "/proc:/proc",
		"-b", lay.tmp+":"+VirtualTmp, "-b", lay.work+":"+VirtualWork+"!")
	for _, m := range s.ReadOnly {
		if err := os.MkdirAll(filepath.Join(lay.root, m.Virtual), 0o755); err != nil {
			return nil, fmt.Errorf("proot root: %w", err)
		}
		a = append(a, "-b", m.Host+":"+m.Virtual)
	}
	return append(a, s.Command...), nil
}

// prootEntry creates the mount point or symlink for e inside root.
func prootEntry(root string, e viewEntry) error {
	dst := filepath.Join(root, e.dst)
	var err error
	switch {
	case e.symlink != "":
		err = os.Symlink(e.symlink, dst)
	case e.dir:
		err = os.MkdirAll(dst, 0o755)
	default:
		err = os.WriteFile(dst, nil, 0o644)
	}
	if err != nil {
		return fmt.Errorf("proot root: %w", err)
	}
	return nil
}

var prootSignalRE = regexp.MustCompile(`proot info: pid \d+: terminated with signal (\d+)`)

// prootSignal reads the signal PRoot reported for a tracee from the end of
// the stderr log (PRoot exits 255 and prints it), or returns 0.
func prootSignal(stderrPath string) int {
	b, err := headTail(stderrPath, tailHalf)
	if err != nil {
		return 0
	}
	m := prootSignalRE.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(string(bytes.TrimSpace(m[len(m)-1][1])))
	return n
}
