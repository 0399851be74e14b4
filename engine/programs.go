package engine

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// The programs a study runs: an enclosed worker keeps the host (it is not
// a sandbox for the agent), so it could rewrite a program that the study
// runs later outside its enclosure — the reviewer's (a command, codex or
// claude study's reviewer runs the same executable as its worker) or this
// binary, which starts every agent's guard and the sandbox runner. The
// worker's enclosure binds these files read-only (Enclosure.WithPrograms),
// and before every launch the supervisor checks that each still has the
// content it had at the supervisor's first launch; a change pauses the
// study for the operator, and nothing is launched (docs/security.md).

// programPin is one program file's content when first checked.
type programPin struct {
	path string // the file, symlinks resolved
	name string // as the study names it
	sum  string
	meta fileMeta
}

// fileMeta is what changes when a file is written, replaced or chmodded.
type fileMeta struct {
	dev, ino   uint64
	size       int64
	mode       uint32
	mtim, ctim syscall.Timespec
}

func statMeta(path string) (fileMeta, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileMeta{}, err
	}
	return fileMeta{dev: st.Dev, ino: st.Ino, size: st.Size, mode: st.Mode, mtim: st.Mtim, ctim: st.Ctim}, nil
}

// programPins pins a study's programs at the first check.
type programPins struct {
	mu     sync.Mutex
	names  []string // the programs, as the study names them
	pinned bool
	pins   []programPin
}

// resolveProgram is name's file (looked up on PATH when it has no slash),
// symlinks resolved; "" when there is none.
func resolveProgram(name string) string {
	if name == "" {
		return ""
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// studyPrograms are the programs a study pins: each named one, and for a
// script the interpreter its "#!" line names (through env, the program env
// would start), to maxInterpreters levels. An interpreter in a folder the
// worker may write (its home, /tmp) would otherwise be a way to rewrite its
// reviewer.
//
// It returns names, as the study (or the "#!" line) names them, so that
// the check also sees one that resolves elsewhere on PATH later.
func studyPrograms(names ...string) []string {
	var out, seen []string
	queue := slices.Clone(names)
	for depth := map[string]int{}; len(queue) > 0; queue = queue[1:] {
		n := queue[0]
		p := resolveProgram(n)
		if p == "" || slices.Contains(seen, p) {
			continue
		}
		out, seen = append(out, n), append(seen, p)
		if depth[n] < maxInterpreters {
			for _, next := range interpretersOf(p) {
				depth[next] = depth[n] + 1
				queue = append(queue, next)
			}
		}
	}
	return out
}

// maxInterpreters bounds how many "#!" lines studyPrograms follows.
const maxInterpreters = 3

// interpretersOf are the programs that the "#!" line of the file at path
// names (none when there is none): the interpreter, and for /usr/bin/env
// also its first argument that is not an option or an assignment.
func interpretersOf(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	fields := strings.Fields(rest)
	if !ok || len(fields) == 0 {
		return nil
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[:1]
	}
	for _, a := range fields[1:] {
		if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			return []string{fields[0], a}
		}
	}
	return fields[:1]
}

// found are the program files as PATH finds them, symlinks not resolved
// (a virtual environment's python3 is a symlink out of it).
func (pp *programPins) found() []string {
	var out []string
	for _, n := range pp.names {
		if p, err := exec.LookPath(n); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// paths are the resolved program files, for the enclosure.
func (pp *programPins) paths() []string {
	var out []string
	for _, n := range pp.names {
		if p := resolveProgram(n); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// check pins the programs the first time and afterwards reports the first
// one whose file now resolves elsewhere, is gone, or has other content.
func (pp *programPins) check() error {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if !pp.pinned {
		pp.pinned = true
		for _, n := range pp.names {
			if p := resolveProgram(n); p != "" {
				if meta, err := statMeta(p); err == nil {
					if sum, _, err := hashFile(p); err == nil {
						pp.pins = append(pp.pins, programPin{path: p, name: n, sum: sum, meta: meta})
					}
				}
			}
		}
		return nil
	}
	for i := range pp.pins {
		if err := pp.pins[i].verify(); err != nil {
			return err
		}
	}
	return nil
}

// verify compares the pin with the file now: unchanged metadata is taken
// as unchanged content (a write, replacement or chmod changes the ctime,
// which an unprivileged process cannot set back), else it is hashed again.
func (pin *programPin) verify() error {
	changed := func(why string) error {
		return fmt.Errorf("the study's program %s (%s) %s since this supervisor started; an agent may have rewritten it, so nothing more is launched: check it, then resume", pin.name, pin.path, why)
	}
	switch p := resolveProgram(pin.name); {
	case p == "":
		return changed("is gone")
	case p != pin.path:
		return changed("now resolves to " + p)
	}
	meta, err := statMeta(pin.path)
	if err != nil {
		return changed("is gone")
	}
	if meta == pin.meta {
		return nil
	}
	sum, _, err := hashFile(pin.path)
	if err != nil || sum != pin.sum {
		return changed("changed")
	}
	pin.meta = meta // same content (touched): no need to hash it again
	return nil
}
