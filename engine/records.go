package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/simjecture/simjecture/store"
)

func putRecord(tx *store.Tx, k store.Kind, id, status string, v any) (bool, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return false, fmt.Errorf("encode %s %s: %w", k, id, err)
	}
	isNew, err := tx.PutDoc(k, id, status, b)
	if err != nil {
		return false, err
	}
	return isNew, appendEvent(tx, RecordPayload{Kind: k, ID: id, Status: status, SHA256: docHash(b)})
}

func docHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// EventHead is the newest event when a report was written: an anchor outside
// the database, so removing the newest events shows.
type EventHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// verifyRecords compares every document row with the hash its last record
// event holds, and the event log with the head report.json recorded.
func verifyRecords(ctx context.Context, c Campaign, s *store.Store) ([]string, error) {
	var findings []string
	err := s.Read(ctx, func(tx *store.Tx) error {
		want, err := recordedHashes(tx)
		if err != nil {
			return err
		}
		for _, k := range []store.Kind{store.Experiments, store.Claims, store.Reviews, store.Approvals, store.Assignments} {
			docs, err := tx.ListDocs(k)
			if err != nil {
				return err
			}
			for _, d := range docs {
				// The status column is what listings filter on; records
				// older than its field in the event carry none.
				r, ok := want[string(k)+"/"+d.ID]
				if !ok || r.SHA256 != docHash(d.JSON) || (r.Status != "" && r.Status != d.Status) {
					findings = append(findings, fmt.Sprintf("%s %s was changed outside the harness (its row does not match the event log)", k, d.ID))
				}
			}
		}
		head, err := tx.Head()
		if err != nil {
			return err
		}
		more, err := checkHead(c, tx, head)
		findings = append(findings, more...)
		return err
	})
	return findings, err
}

// recordedHashes maps kind/id to the last record event of each document.
func recordedHashes(tx *store.Tx) (map[string]RecordPayload, error) {
	want := map[string]RecordPayload{}
	for after := int64(0); ; {
		evs, err := tx.EventsAfter(after, 1000)
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			after = ev.Seq
			if EventType(ev.Type) != EvRecord {
				continue
			}
			var p RecordPayload
			if json.Unmarshal(ev.Payload, &p) == nil {
				want[string(p.Kind)+"/"+p.ID] = p
			}
		}
		if len(evs) < 1000 {
			return want, nil
		}
	}
}

// checkHead compares the log with the head recorded in report.json, which
// every state change and exit rewrites: a missing report, one that names an
// event the log does not hold, or (when no supervisor is running, so none
// is due to rewrite it) one older than the log means events were removed or
// added after the last report. When no supervisor runs and the report
// anchors the log's head, the reports must also say what the store says
// (checkReports).
func checkHead(c Campaign, tx *store.Tx, head store.Event) ([]string, error) {
	body, err := os.ReadFile(filepath.Join(c.Dir, "report.json"))
	if err != nil {
		return []string{fmt.Sprintf("report.json: missing (%v); it anchors the newest event outside the store", err)}, nil
	}
	var rep struct {
		EventHead *EventHead `json:"event_head"`
	}
	if json.Unmarshal(body, &rep) != nil || rep.EventHead == nil {
		return []string{"report.json: unreadable, or it records no event head"}, nil
	}
	at := rep.EventHead.Seq
	switch {
	case head.Seq < at:
		return []string{fmt.Sprintf("event chain: report.json recorded event %d, but the log ends at %d (events were removed)", at, head.Seq)}, nil
	case head.Seq > at && !Owned(c):
		return []string{fmt.Sprintf("event chain: report.json recorded event %d, but the log goes on to %d with no supervisor running (events were added after the last report, or the report was replaced)", at, head.Seq)}, nil
	}
	evs, err := tx.EventsAfter(at-1, 1)
	if err != nil {
		return nil, err
	}
	if at > 0 && (len(evs) == 0 || evs[0].Seq != at || evs[0].Hash != rep.EventHead.Hash) {
		return []string{fmt.Sprintf("event chain: event %d differs from the one report.json recorded", at)}, nil
	}
	if head.Seq != at || Owned(c) {
		return nil, nil // a supervisor runs: it rewrites the reports
	}
	return checkReports(tx, c, body)
}
