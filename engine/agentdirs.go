package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/simjecture/simjecture/provider"
)

// The folders an enclosed agent may write — research/, the agent's state
// folder, and the log folder of its own launch under DIR/supervisor/ —
// are never followed by the supervisor: a launch's log folder is made new
// here with mkdir(2) in DIR/supervisor/ (read-only to every agent), its
// files are created with O_EXCL|O_NOFOLLOW (provider.CreateNew), and
// what is read back from one is opened with O_NOFOLLOW (docs/security.md,
// "The record and the agent").

// newAgentDir makes dir, the log folder of one agent launch, with
// mkdir(2). A folder of that name left by an attempt that did not finish
// (a review paused, or stopped for the operator, before its verdict) held
// an agent's writes: it is moved aside (moveAside) rather than reused.
func newAgentDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("make %s: %w", filepath.Dir(dir), err)
	}
	err := os.Mkdir(dir, 0o755)
	if !errors.Is(err, fs.ErrExist) {
		if err != nil {
			return fmt.Errorf("make %s: %w", dir, err)
		}
		return nil
	}
	if _, err := moveAside(dir); err != nil {
		return err
	}
	return provider.MakeNewDir(dir)
}

// moveAside renames the log folder of an attempt that did not finish to
// dir.interrupted-N (the first N free), kept for the operator, and each of
// its retry siblings dir-SUB (provider.FreshLogDir) to
// dir.interrupted-N-SUB, so that the next attempt's folders are new. It
// returns the new name of dir.
func moveAside(dir string) (string, error) {
	siblings, _ := filepath.Glob(dir + "-*")
	for n := 1; ; n++ {
		aside := fmt.Sprintf("%s.interrupted-%d", dir, n)
		if _, err := os.Lstat(aside); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Rename(dir, aside); err != nil {
			return "", fmt.Errorf("move the earlier attempt's folder aside: %w", err)
		}
		for _, s := range siblings {
			if err := os.Rename(s, aside+s[len(dir):]); err != nil {
				return "", fmt.Errorf("move the earlier attempt's folder aside: %w", err)
			}
		}
		return aside, nil
	}
}

// makeReviewFolder makes the new folder of a review attempt, the
// reviewer's working folder in it, and keeps the packet there.
func makeReviewFolder(dir string, body []byte) (string, error) {
	if err := newAgentDir(dir); err != nil {
		return "", err
	}
	work := filepath.Join(dir, "work")
	if err := provider.MakeNewDir(work); err != nil {
		return "", err
	}
	if err := provider.WriteNew(filepath.Join(dir, PacketFile), body, 0o644); err != nil {
		return "", fmt.Errorf("keep review packet: %w", err)
	}
	return work, nil
}
