package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// This file keeps the hashes of an agent turn's folder. When a worker turn
// or a review attempt has ended and nothing of its process tree runs any
// more, the supervisor hashes the folder's files (prompt.txt, stdout.log,
// stderr.log and whatever the agent backend wrote there) and records them
// in the event that ends the turn: turn_ended, review_resolved,
// review_failed, contract_reviewed or adjudicated. verify re-hashes them
// (verifylogs.go).

// maxTurnFiles bounds how many files of one turn folder are hashed: the
// folder's own files first, then its sub-folders' in walk order.
const maxTurnFiles = 256

// TurnLogs maps each hashed file of a turn's folder, as a slash path
// relative to the campaign folder ("supervisor/turn-00003/stdout.log"),
// to its sha256 and size. nil: not recorded.
type TurnLogs map[string]sandbox.Artifact

// turnLogs hashes the folder of a turn that has ended. It records nothing
// when a process of the turn outlived it (its files may still change);
// files it cannot hash are logged and left out.
func (sv *Supervisor) turnLogs(dir string, out provider.Outcome) TurnLogs {
	if out.Lingering {
		sv.log.Warn("turn folder not hashed: a process of the turn outlived it", "folder", dir)
		return nil
	}
	// A retry in a new session logged to a sibling, DIR-SUB
	// (provider.FreshLogDir): its files are the turn's too.
	siblings, _ := filepath.Glob(dir + "-*")
	var logs TurnLogs
	for _, d := range append([]string{dir}, siblings...) {
		got, problems := hashTurnFolder(sv.c, d)
		for _, err := range problems {
			sv.log.Warn("hash the turn folder", "folder", d, "err", err)
		}
		if logs == nil {
			logs = got
			continue
		}
		maps.Copy(logs, got)
	}
	return logs
}

// endStoppedTurn records the end of a worker turn or review attempt that
// the study's pause, cancel or deadline stopped, with its folder's hashes,
// so that its logs are checked by verify like those of a turn that ended on
// its own (for a review, Turn is the attempt). A review attempt's folder is
// first moved aside, where it stays. A supervisor stopped by a signal
// (ctx done) records it too: the store write does not take ctx's end.
func (sv *Supervisor) endStoppedTurn(ctx context.Context, t provider.Turn, review string, out provider.Outcome, stop Status) {
	dir := t.LogDir
	if review != "" { // its next attempt has the same folder name: keep this one aside now
		aside, err := moveAside(dir)
		if err != nil {
			sv.log.Warn("stopped review attempt's logs not hashed", "folder", dir, "err", err)
			return
		}
		dir = aside
	}
	logs := sv.turnLogs(dir, out)
	sv.record(ctx, "record the stopped turn's end", func(tx *store.Tx, _ *SupervisorState) error {
		return appendEvent(tx, TurnEndedPayload{Turn: t.Number, Stopped: string(stop), Review: review, Logs: logs})
	})
}

// hashTurnFolder hashes the regular files under dir (symbolic links and
// other special files are not followed), streaming each, at most
// maxTurnFiles of them. A folder that does not exist gives nil.
func hashTurnFolder(c Campaign, dir string) (TurnLogs, []error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("list %s: %w", dir, err)}
	}
	h := folderHasher{c: c, logs: TurnLogs{}}
	var subs []string
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case e.Type().IsRegular():
			h.add(path)
		case e.IsDir():
			subs = append(subs, path)
		}
	}
	for _, sub := range subs {
		err := filepath.WalkDir(sub, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				h.problems = append(h.problems, err)
			case d.Type().IsRegular() && !h.add(path):
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			h.problems = append(h.problems, err)
		}
	}
	if len(h.logs) == 0 {
		return nil, h.problems
	}
	return h.logs, h.problems
}

// folderHasher collects the hashes of one turn folder.
type folderHasher struct {
	c        Campaign
	logs     TurnLogs
	problems []error
}

// add hashes one file; false once the bound is reached.
func (h *folderHasher) add(path string) bool {
	if len(h.logs) >= maxTurnFiles {
		h.problems = append(h.problems, fmt.Errorf("more than %d files: %s and later ones not hashed", maxTurnFiles, path))
		return false
	}
	rel, err := filepath.Rel(h.c.Dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		h.problems = append(h.problems, fmt.Errorf("%s is not under the campaign folder", path))
		return true
	}
	sum, size, err := hashFile(path)
	if err != nil {
		h.problems = append(h.problems, fmt.Errorf("hash %s: %w", rel, err))
		return true
	}
	h.logs[filepath.ToSlash(rel)] = sandbox.Artifact{SHA256: sum, Bytes: size}
	return true
}

// withoutLogs is an event payload without its logs field, for the worker's
// news: the hashes are the record's, not news, and would push the verdict's
// rationale past the news line's bound. Payloads carrying logs encode their
// fields in JSON-name order, which re-encoding keeps.
func withoutLogs(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"logs":`)) {
		return raw
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw
	}
	delete(fields, "logs")
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return out
}
