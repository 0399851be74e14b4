package sandbox

import (
	"os"
	"slices"
	"strings"
)

// The process-cooperative backend: plain processes of this account with
// virtual paths translated; not a security sandbox, never chosen by auto.

func probeProcess() Report {
	r := Report{Backend: ProcessCooperative}
	if os.Geteuid() == 0 {
		r.Reason, r.Remedy = ReasonUnprivileged, RemedyUnprivileged
		return r
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		r.Reason = "/proc is not available for process-tree monitoring"
		return r
	}
	r.Available, r.Reason = true, ReasonProbePassed
	return r
}

// launchProcess runs the command directly, its paths translated.
func launchProcess(s Spec, lay layout, cfg *helperConfig) error {
	cfg.Argv, cfg.Env, cfg.Dir = processLaunch(s, lay)
	cfg.ExitSignals = false
	return nil
}

// translator maps virtual paths to host paths for process-cooperative,
// longest virtual prefix first.
type translator [][2]string

func newTranslator(s Spec, lay layout) translator {
	t := translator{{VirtualWork, lay.work}, {VirtualTmp, lay.tmp}}
	for _, m := range s.ReadOnly {
		t = append(t, [2]string{m.Virtual, m.Host})
	}
	slices.SortStableFunc(t, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	return t
}

// path translates one path-like string.
func (t translator) path(p string) string {
	for _, m := range t {
		if within(p, m[0]) {
			return m[1] + p[len(m[0]):]
		}
	}
	return p
}

// value translates every ':'-separated piece of an environment value.
func (t translator) value(v string) string {
	parts := strings.Split(v, ":")
	for i, p := range parts {
		parts[i] = t.path(p)
	}
	return strings.Join(parts, ":")
}

// processLaunch returns argv, environment and working directory for the
// process-cooperative backend: virtual paths are translated in each argument,
// the working directory and each ':'-piece of every environment value.
func processLaunch(s Spec, lay layout) (argv, env []string, dir string) {
	t := newTranslator(s, lay)
	for _, a := range s.Command {
		argv = append(argv, t.path(a))
	}
	vars := sandboxEnv(s)
	for k, v := range vars {
		vars[k] = t.value(v)
	}
	return argv, envList(vars), t.path(VirtualWork)
}
