package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// LoadSnapshot reads the whole study in one consistent read and derives
// "interrupted" when the record says running but no live supervisor owns it.
func LoadSnapshot(ctx context.Context, c Campaign, s *store.Store) (Snapshot, error) {
	return loadSnapshot(ctx, c, s, -1)
}

// ViewExperiments is how many of the newest experiments a View's snapshot
// holds: a display needs the newest ones and the counts, not every receipt
// of a study of thousands.
const ViewExperiments = 500

// loadSnapshot reads the study with every experiment (window < 0) or the
// newest window of them and no notes.
func loadSnapshot(ctx context.Context, c Campaign, s *store.Store, window int) (Snapshot, error) {
	var snap Snapshot
	err := s.Read(ctx, func(tx *store.Tx) error {
		var err error
		snap, err = snapshotIn(tx, c, window, window < 0)
		return err
	})
	return snap, err
}

// snapshotIn reads c's study in tx: every experiment (window < 0) or the
// newest window of them, with the notes when notes is set.
func snapshotIn(tx *store.Tx, c Campaign, window int, notes bool) (Snapshot, error) {
	snap, err := readSnapshot(tx, window, notes)
	if err == nil {
		snap.ScienceView, err = readScience(tx, c, snap.Mode)
	}
	if err != nil {
		return snap, fmt.Errorf("read study: %w", err)
	}
	snap.Campaign = c.Dir
	for i := range snap.Experiments {
		snap.Experiments[i] = c.Place(snap.Experiments[i])
	}
	if snap.Status == StatusRunning && !Owned(c) {
		snap.Status = StatusInterrupted
	}
	return snap, nil
}

func readSnapshot(tx *store.Tx, window int, notes bool) (Snapshot, error) {
	snap, err := readHeader(tx)
	if err != nil {
		return snap, err
	}
	if err := readRecords(tx, &snap, window); err != nil {
		return snap, err
	}
	if snap.Steering, err = listSteering(tx); err != nil {
		return snap, err
	}
	if notes {
		snap.Notes, err = listNotes(tx)
	}
	return snap, err
}

// readHeader reads what does not grow with the study: the contract, the
// supervisor's state, the usage and the experiment counts.
func readHeader(tx *store.Tx) (Snapshot, error) {
	var snap Snapshot
	row, err := tx.GetStudy()
	if err != nil {
		return snap, err
	}
	var k Contract
	if err := json.Unmarshal(row.ContractJSON, &k); err != nil {
		return snap, fmt.Errorf("decode contract: %w", err)
	}
	st, err := getState(tx)
	if err != nil {
		return snap, err
	}
	fillFromContract(&snap, k)
	fillFromState(&snap, st)
	snap.RecordProtection = st.RecordProtection
	if snap.Usage.InputTokens, snap.Usage.OutputTokens, err = tx.SumUsage(); err != nil {
		return snap, err
	}
	snap.ExperimentCounts, err = experimentCounts(tx)
	return snap, err
}

func readRecords(tx *store.Tx, snap *Snapshot, window int) error {
	var err error
	if window < 0 {
		snap.Experiments, err = listDocs[Receipt](tx, store.Experiments)
	} else {
		var docs []store.Doc
		if docs, err = tx.ListDocsNewest(store.Experiments, window); err == nil {
			snap.Experiments, err = decodeDocs[Receipt](store.Experiments, docs)
		}
	}
	if err != nil {
		return err
	}
	if snap.Claims, err = listDocs[Claim](tx, store.Claims); err != nil {
		return err
	}
	snap.Reviews, err = listDocs[Review](tx, store.Reviews)
	return err
}

func fillFromContract(snap *Snapshot, k Contract) {
	snap.StudyID, snap.Mode, snap.AgentBackend, snap.Model, snap.JudgeModel = k.StudyID, k.Mode, k.AgentBackend, k.Model, k.JudgeModel
	snap.ExecutionBackend, snap.CompletionPolicy = k.ExecutionBackend, k.CompletionPolicy
	if snap.ExecutionBackend == "" {
		snap.ExecutionBackend = sandbox.Bubblewrap // a record with no backend means bubblewrap
	}
	snap.CreatedAt, snap.Deadline = k.CreatedAt, k.Deadline
	snap.RemainingSeconds = max(0, int64(time.Until(k.Deadline).Seconds()))
}

// fillFromState copies the supervisor's state into snap. An ended study has
// no time left, whatever its deadline says (docs/campaign.md).
func fillFromState(snap *Snapshot, st SupervisorState) {
	snap.Status, snap.Activity, snap.Turn, snap.Provider, snap.LastError = st.Status, st.Activity, st.Turn, st.Provider, st.LastError
	snap.UnreachableWorkers = st.UnreachableWorkers
	if terminal(st.Status) {
		snap.RemainingSeconds = 0
	}
}

func listDocs[T any](tx *store.Tx, k store.Kind, statuses ...string) ([]T, error) {
	docs, err := tx.ListDocs(k, statuses...)
	if err != nil {
		return nil, err
	}
	return decodeDocs[T](k, docs)
}

// decodeDocs decodes a listing of documents of kind k.
func decodeDocs[T any](k store.Kind, docs []store.Doc) ([]T, error) {
	out := make([]T, 0, len(docs))
	for _, d := range docs {
		var v T
		if err := json.Unmarshal(d.JSON, &v); err != nil {
			return nil, fmt.Errorf("decode %s %s: %w", k, d.ID, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func listNotes(tx *store.Tx) ([]Note, error) {
	raw, err := tx.ListNotes()
	if err != nil {
		return nil, err
	}
	return decodeNotes(raw)
}

// decodeNotes decodes note rows; a note's id is its row's number.
func decodeNotes(raw []store.NoteRow) ([]Note, error) {
	out := make([]Note, 0, len(raw))
	for _, d := range raw {
		var n Note
		if err := json.Unmarshal(d.JSON, &n); err != nil {
			return nil, fmt.Errorf("decode note %d: %w", d.Seq, err)
		}
		n.ID = d.Seq
		out = append(out, n)
	}
	return out, nil
}

// experimentCounts counts the study's experiments by status.
func experimentCounts(tx *store.Tx) (map[ExpStatus]int, error) {
	counts, err := tx.CountByStatus(store.Experiments)
	if err != nil {
		return nil, err
	}
	out := make(map[ExpStatus]int, len(counts))
	for status, n := range counts {
		out[ExpStatus(status)] = n
	}
	return out, nil
}
