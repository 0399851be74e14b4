package slurm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// submitOrAttach returns the Slurm job id of f: the recorded one, one found
// by name after a crash between sbatch and recording its answer, or a new
// submission of spec.
func (c *Cluster) submitOrAttach(ctx context.Context, f jobFolder, spec sandbox.Spec) (string, error) {
	if data, err := c.cfg.Files.ReadFile(f.path(jobIDFile)); err == nil {
		return strings.TrimSpace(string(data)), nil
	}
	if c.submitted(f) {
		if id, err := c.findByName(ctx, f.name); err != nil || id != "" {
			return id, err
		}
	}
	if err := c.stage(f, spec); err != nil {
		return "", err
	}
	if err := c.cfg.Files.WriteFile(f.path(submitFile), nil, 0o644); err != nil {
		return "", err
	}
	out, err := c.cfg.Exec.Output(ctx, "sbatch", c.sbatchArgs(f, spec)...)
	if err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // --parsable: jobid[;cluster]
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("submit: sbatch answered %q, not a job id", out)
	}
	return id, c.cfg.Files.WriteFile(f.path(jobIDFile), []byte(id+"\n"), 0o644)
}

// findByName looks for a job of ours submitted under name.
func (c *Cluster) findByName(ctx context.Context, name string) (string, error) {
	out, err := c.cfg.Exec.Output(ctx, "squeue", "-h", "--states=all", "--name="+name, "-o", "%i")
	if err != nil {
		return "", fmt.Errorf("find job %s: %w", name, err)
	}
	id := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	if id != "" {
		return id, c.cfg.Files.WriteFile(filepath.Join(c.cfg.Root, "jobs", name, jobIDFile), []byte(id+"\n"), 0o644)
	}
	return "", nil
}

// stage writes the job folder: the sealed inputs (hash-checked), the node's
// spec, the heartbeat and the batch script.
func (c *Cluster) stage(f jobFolder, spec sandbox.Spec) error {
	bin, err := c.binary()
	if err != nil {
		return err
	}
	node := spec
	node.Sealed = make([]sandbox.SealedFile, len(spec.Sealed))
	for i, s := range spec.Sealed {
		staged := filepath.Join(f.path(inputsDir), s.SHA256)
		if err := c.cfg.Files.Put(s.HostPath, staged, 0o444, s.SHA256); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("stage %s: %w", s.Rel, err)
		}
		node.Sealed[i] = sandbox.SealedFile{Rel: s.Rel, HostPath: staged, SHA256: s.SHA256}
	}
	node.SelfExe, node.RunDir, node.ArtifactDir = "", "", ""
	if err := c.cfg.Files.Touch(f.path(heartbeatFile)); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	ns := nodeSpec{Spec: node, Grace: c.cfg.Grace, Heartbeat: f.path(heartbeatFile)}
	if err := c.writeJSON(f.path(specFile), ns); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	return c.cfg.Files.WriteFile(f.path(scriptFile), []byte(script(bin, f.dir)), 0o755)
}

// script is the batch script: a fixed PATH, then our binary in its job mode.
func script(bin, dir string) string {
	return "#!/bin/sh\n# simjecture: one experiment (see docs/workers.md, Slurm)\n" +
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nexport PATH\n" +
		"exec " + shellQuote(bin) + " " + JobArg + " " + shellQuote(dir) + "\n"
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sbatchArgs are the arguments of the job's submission.
func (c *Cluster) sbatchArgs(f jobFolder, spec sandbox.Spec) []string {
	cpus := max(spec.CPUs, 1)
	args := []string{"--parsable", "--job-name=" + f.name, "--cpus-per-task=" + strconv.Itoa(cpus),
		"--time=" + slurmTime(spec.Timeout+c.cfg.TimeMargin), "--chdir=" + f.dir, "--export=NONE",
		"--output=" + f.path("slurm.out"), "--error=" + f.path("slurm.err")}
	if mb := spec.MemoryBytes >> 20; mb > 0 {
		args = append(args, "--mem="+strconv.FormatInt(mb, 10)+"M")
	}
	if c.cfg.Partition != "" {
		args = append(args, "--partition="+c.cfg.Partition)
	}
	if c.cfg.Account != "" {
		args = append(args, "--account="+c.cfg.Account)
	}
	return append(args, f.path(scriptFile))
}

// slurmTime formats d as Slurm's minutes:seconds, at least one second
// (Slurm itself rounds a limit up to whole minutes).
func slurmTime(d time.Duration) string {
	s := max(int64((d+time.Second-1)/time.Second), 1)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
