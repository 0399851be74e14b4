package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// recordedLogs are the turn-folder hashes one event recorded.
type recordedLogs struct {
	seq   int64
	turn  bool // a worker turn's end; else a review attempt's outcome
	files TurnLogs
}

// verifyTurnLogs re-hashes every file of a worker turn's or a review
// attempt's folder that the event ending it recorded (turnlogs.go) and
// names each one changed or missing. Events older than the field record
// none: there is nothing to check for them.
func verifyTurnLogs(ctx context.Context, c Campaign, s *store.Store) []string {
	var recorded []recordedLogs
	err := s.Read(ctx, func(tx *store.Tx) error {
		return eachEvent(tx, func(ev store.Event) {
			if r, ok := loggedEvent(ev); ok {
				recorded = append(recorded, r)
			}
		})
	})
	if err != nil {
		return []string{fmt.Sprintf("turn logs: cannot read the event log: %v", err)}
	}
	var f []string
	for _, r := range recorded {
		f = append(f, r.check(c)...)
	}
	return f
}

// loggedEvent decodes the logs an event recorded, if any. Only a payload
// that has a top-level "logs" field can (a quote inside a JSON string is
// escaped, so text the agent wrote cannot look like one).
func loggedEvent(ev store.Event) (recordedLogs, bool) {
	if !bytes.Contains(ev.Payload, []byte(`"logs":`)) {
		return recordedLogs{}, false
	}
	var p struct {
		Logs   TurnLogs `json:"logs"`
		Review string   `json:"review"` // a stopped review attempt's turn_ended
	}
	if json.Unmarshal(ev.Payload, &p) != nil || len(p.Logs) == 0 {
		return recordedLogs{}, false
	}
	return recordedLogs{seq: ev.Seq, turn: EventType(ev.Type) == EvTurnEnded && p.Review == "", files: p.Logs}, true
}

// check re-hashes the files of one event.
func (r recordedLogs) check(c Campaign) []string {
	since := "its review attempt ended"
	if r.turn {
		since = "its turn ended"
	}
	var f []string
	for _, rel := range sortedKeys(r.files) {
		want := r.files[rel]
		local := filepath.FromSlash(rel)
		if !filepath.IsLocal(local) || !strings.HasPrefix(rel, "supervisor/") {
			f = append(f, fmt.Sprintf("event %d records a turn log outside the supervisor folder: %q", r.seq, rel))
			continue
		}
		got, size, err := hashFile(filepath.Join(c.Dir, local))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f = append(f, fmt.Sprintf("%s is missing since %s", rel, since))
		case err != nil:
			f = append(f, fmt.Sprintf("%s cannot be read since %s (%v)", rel, since, err))
		case got != want.SHA256 || size != want.Bytes:
			f = append(f, fmt.Sprintf("%s changed since %s", rel, since))
		}
	}
	return f
}
