package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Reasons recorded in Rejected.
const (
	ReasonSymlink    = "symlink"
	ReasonHardLink   = "hard link"
	ReasonNotRegular = "not a regular file"
	ReasonEscapes    = "escapes work"
	ReasonTooLarge   = "too large"
	ReasonReserved   = "reserved name"
	ReasonWorkspace  = "workspace limit"
	ReasonDenied     = "cannot be read: permission denied"
	ReasonTooLong    = "cannot be read: path longer than PATH_MAX"
	ReasonUnreadable = "cannot be read"
)

// reasonMissing is what collection records for an output that does not
// exist: it goes to MissingOutputs, not RejectedOutputs.
const reasonMissing = "missing"

// Names of the kept console logs in the artifact folder.
const (
	StdoutLog = "stdout.log"
	StderrLog = "stderr.log"
)

// finish runs after the helper: input mutations, the file-size check, the
// last workspace measure, output collection and the console logs.
func finish(s Spec, lay layout, sealed []sealedCopy, res *Result) error {
	res.InputMutations = mutations(sealed)
	u := measureWorkspace([]string{lay.work, lay.tmp}, s.MaxFileBytes, harnessFiles(sealed)) // one walk for both limits
	if res.LimitExceeded == "" && (u.bigFile || logReachedLimit(s.MaxFileBytes, lay)) {
		res.LimitExceeded = LimitFileSize
	}
	breached := res.LimitExceeded == LimitWorkspace || !u.ok || u.total > s.WorkspaceBytes
	if breached {
		res.LimitExceeded = cmp.Or(res.LimitExceeded, LimitWorkspace)
	}
	if err := collectOutputs(s, lay.work, breached, res); err != nil {
		return err
	}
	return keepLogs(s.ArtifactDir, lay, res)
}

// logReachedLimit reports whether a log reached RLIMIT_FSIZE (a writer
// that ignores SIGXFSZ gets EFBIG); files in the work and temporary folders
// are checked by the workspace walk (measureWorkspace).
func logReachedLimit(limit int64, lay layout) bool {
	for _, p := range []string{lay.stdout, lay.stderr} {
		if info, err := os.Stat(p); err == nil && info.Size() > limit {
			return true
		}
	}
	return false
}

// collectOutputs copies every declared output that is a plain file inside
// work to the artifact folder, and records the others. What it copies is at
// most s.WorkspaceBytes in all; after a workspace breach it copies nothing.
func collectOutputs(s Spec, work string, breached bool, res *Result) error {
	res.Artifacts = map[string]Artifact{}
	budget := s.WorkspaceBytes
	for _, out := range s.Outputs {
		rel, reason := outputReason(s, work, out)
		if reason == "" && breached {
			reason = ReasonWorkspace
		}
		if reason == "" {
			a, err := collectOne(filepath.Join(work, rel), filepath.Join(s.ArtifactDir, rel), s.MaxFileBytes, budget)
			reason = collectReason(err)
			if reason == "" && err != nil {
				return err
			}
			if reason == "" {
				res.Artifacts[rel] = a
				budget -= a.Bytes
				continue
			}
		}
		if reason == reasonMissing {
			res.MissingOutputs = append(res.MissingOutputs, out)
		} else {
			res.RejectedOutputs = append(res.RejectedOutputs, Rejected{Path: out, Reason: reason})
		}
	}
	return nil
}

// outputReason cleans a declared output and returns "" for a collectable
// file, "missing", or why it is rejected.
func outputReason(s Spec, work, out string) (string, string) {
	rel, ok := cleanRel(out)
	switch {
	case !ok:
		return rel, ReasonEscapes
	case rel == StdoutLog || rel == StderrLog:
		return rel, ReasonReserved
	}
	return rel, inspectOutput(work, rel, s.MaxFileBytes)
}

// collectReason is the rejection reason a collectOne error stands for, or ""
// for success and for a harness failure.
func collectReason(err error) string {
	switch {
	case errors.Is(err, errNotCollectable):
		return ReasonNotRegular
	case errors.Is(err, errUnreadable):
		return unreadableReason(err)
	case errors.Is(err, errOverBudget):
		return ReasonWorkspace
	}
	return ""
}

// inspectOutput returns "" for a collectable file, "missing", or a reason.
func inspectOutput(work, rel string, maxBytes int64) string {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		info, err := os.Lstat(filepath.Join(work, path.Join(parts[:i]...)))
		switch {
		case err != nil:
			return unreadableReason(err)
		case info.Mode()&fs.ModeSymlink != 0:
			return ReasonEscapes
		case !info.IsDir():
			return reasonMissing // a file where a folder would be: nothing at rel
		}
	}
	info, err := os.Lstat(filepath.Join(work, rel))
	switch {
	case err != nil:
		return unreadableReason(err)
	case info.Mode()&fs.ModeSymlink != 0:
		return ReasonSymlink
	case !info.Mode().IsRegular():
		return ReasonNotRegular
	case nlink(info) > 1:
		return ReasonHardLink
	case info.Size() > maxBytes:
		// RLIMIT_FSIZE (maxBytes + 1, see fsizeLimit) stops a file one
		// byte over, so one that got there was cut short.
		return ReasonTooLarge
	}
	return ""
}

func nlink(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// unreadableReason names why an output could not be looked at or opened:
// missing only when it does not exist.
func unreadableReason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return reasonMissing
	case errors.Is(err, fs.ErrPermission):
		return ReasonDenied
	case errors.Is(err, syscall.ENAMETOOLONG):
		return ReasonTooLong
	}
	return ReasonUnreadable
}

var (
	errUnreadable     = errors.New("output cannot be read")
	errNotCollectable = errors.New("output changed while being collected")
	errOverBudget     = errors.New("outputs pass the workspace limit")
)

// collectOne copies src (opened without following symlinks) to dst through a
// temporary name, hashing it on the way. It copies at most maxBytes, and
// nothing when src holds more than budget.
func collectOne(src, dst string, maxBytes, budget int64) (Artifact, error) {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.EIO) {
		return Artifact{}, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	if err != nil { // a symlink (ELOOP), gone, or a FIFO or device swapped in
		return Artifact{}, errNotCollectable
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil || !info.Mode().IsRegular() || nlink(info) > 1 {
		return Artifact{}, errNotCollectable
	}
	if info.Size() > budget {
		return Artifact{}, errOverBudget
	}
	err = os.MkdirAll(filepath.Dir(dst), 0o755)
	if errors.Is(err, syscall.ENAMETOOLONG) { // the artifact folder's name makes it too long
		return Artifact{}, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	if err != nil {
		return Artifact{}, fmt.Errorf("collect: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".collect-*")
	if err != nil {
		return Artifact{}, fmt.Errorf("collect: %w", err)
	}
	defer os.Remove(tmp.Name())
	sum, n, err := hashReader(io.TeeReader(io.LimitReader(in, min(maxBytes, budget+1)), tmp))
	if err == nil && n > budget { // it grew while being copied
		err = errOverBudget
	}
	if err == nil {
		err = errors.Join(tmp.Chmod(0o444), tmp.Close())
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = tmp.Close()
		return Artifact{}, fmt.Errorf("collect %s: %w", filepath.Base(dst), err)
	}
	return Artifact{SHA256: sum, Bytes: n}, nil
}
