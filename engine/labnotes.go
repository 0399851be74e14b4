package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simjecture/simjecture/store"
)

// Limits of a note and of a page of notes or receipts.
const (
	maxNoteBytes       = 16384
	maxNoteExperiments = 32
	defaultPage        = 20
	maxPage            = 100
)

// NoteArgs are the arguments of lab note.
type NoteArgs struct {
	Statement   string   `json:"statement"`
	Kind        NoteKind `json:"kind"`
	Experiments []string `json:"experiments"`
	Supersedes  int64    `json:"supersedes"`
}

// Note records a note. Its kind defaults to observation; the experiments it
// rests on must exist; a superseded note must exist and not be superseded
// already. Nothing is written when any of it is wrong.
func (l *Lab) Note(ctx context.Context, a NoteArgs) (Note, error) {
	if strings.TrimSpace(a.Statement) == "" || len(a.Statement) > maxNoteBytes {
		return Note{}, fmt.Errorf("note statement must be 1 to %d characters, not blank: %w", maxNoteBytes, ErrLab)
	}
	if a.Kind == "" {
		a.Kind = NoteObservation
	}
	if !slices.Contains(NoteKinds, a.Kind) {
		return Note{}, fmt.Errorf("unknown note kind %q (known: %v): %w", a.Kind, NoteKinds, ErrLab)
	}
	if len(a.Experiments) > maxNoteExperiments {
		return Note{}, fmt.Errorf("a note rests on at most %d experiments, not %d: %w", maxNoteExperiments, len(a.Experiments), ErrLab)
	}
	if a.Supersedes < 0 {
		return Note{}, fmt.Errorf("supersedes must be a note id, not %d: %w", a.Supersedes, ErrLab)
	}
	n := Note{Statement: a.Statement, Kind: a.Kind, Experiments: a.Experiments, Supersedes: a.Supersedes, CreatedAt: time.Now().UTC()}
	err := l.write(ctx, func(tx *store.Tx) error {
		if err := checkNoteLinks(tx, n); err != nil {
			return err
		}
		b, err := json.Marshal(n)
		if err != nil {
			return fmt.Errorf("encode note: %w", err)
		}
		if n.ID, err = tx.AddNote(string(n.Kind), n.Supersedes, b); err != nil {
			return err
		}
		return appendEvent(tx, NoteAddedPayload{n})
	})
	if err != nil {
		return Note{}, err
	}
	return n, nil
}

// checkNoteLinks holds a note's experiments and superseded note to the record.
func checkNoteLinks(tx *store.Tx, n Note) error {
	for _, id := range n.Experiments {
		if _, err := tx.GetDoc(store.Experiments, id); err != nil {
			return fmt.Errorf("note rests on %q, which is no experiment of this study: %w", id, ErrLab)
		}
	}
	if n.Supersedes == 0 {
		return nil
	}
	if _, err := tx.GetNote(n.Supersedes); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("supersedes note %d, which does not exist: %w", n.Supersedes, ErrLab)
	} else if err != nil {
		return err
	}
	next, err := tx.Successors([]int64{n.Supersedes})
	if err != nil {
		return err
	}
	if by, ok := next[n.Supersedes]; ok {
		return fmt.Errorf("note %d is already superseded by note %d; supersede that one: %w", n.Supersedes, by, ErrLab)
	}
	return nil
}

// NotesArgs are the arguments of lab notes.
type NotesArgs struct {
	Kind   NoteKind `json:"kind"`
	Limit  int      `json:"limit"`
	Offset int      `json:"offset"`
}

// NoteEntry is a note as lab notes lists it: with the note that supersedes
// it, if any.
type NoteEntry struct {
	Note
	SupersededBy int64 `json:"superseded_by,omitempty"`
}

// NotesPage is the answer of lab notes.
type NotesPage struct {
	Total  int         `json:"total"` // notes matching the kind filter
	Offset int         `json:"offset"`
	Limit  int         `json:"limit"`
	Notes  []NoteEntry `json:"notes"` // newest first
}

// Notes pages the notes, newest first, optionally of one kind.
func (l *Lab) Notes(ctx context.Context, a NotesArgs) (NotesPage, error) {
	if a.Kind != "" && !slices.Contains(NoteKinds, a.Kind) {
		return NotesPage{}, fmt.Errorf("unknown note kind %q (known: %v): %w", a.Kind, NoteKinds, ErrLab)
	}
	limit, err := pageLimit(a.Limit, a.Offset)
	if err != nil {
		return NotesPage{}, err
	}
	p := NotesPage{Offset: a.Offset, Limit: limit, Notes: []NoteEntry{}}
	err = l.S.Read(ctx, func(tx *store.Tx) error {
		var err error
		if p.Total, err = countNotes(tx, a.Kind); err != nil {
			return err
		}
		rows, err := tx.PageNotes(string(a.Kind), limit, a.Offset)
		if err != nil {
			return err
		}
		p.Notes, err = noteEntries(tx, rows)
		return err
	})
	return p, err
}

func countNotes(tx *store.Tx, kind NoteKind) (int, error) {
	if kind == "" {
		return tx.CountNotes()
	}
	return tx.CountNotes(string(kind))
}

// noteEntries decodes note rows and marks those a later note supersedes.
func noteEntries(tx *store.Tx, rows []store.NoteRow) ([]NoteEntry, error) {
	notes, err := decodeNotes(rows)
	if err != nil {
		return nil, err
	}
	seqs := make([]int64, len(notes))
	for i, n := range notes {
		seqs[i] = n.ID
	}
	next, err := tx.Successors(seqs)
	if err != nil {
		return nil, err
	}
	out := make([]NoteEntry, len(notes))
	for i, n := range notes {
		out[i] = NoteEntry{Note: n, SupersededBy: next[n.ID]}
	}
	return out, nil
}

// pageLimit checks a page's limit and offset; limit 0 is the default.
func pageLimit(limit, offset int) (int, error) {
	switch {
	case limit < 0 || limit > maxPage:
		return 0, fmt.Errorf("limit must be 1 to %d, not %d: %w", maxPage, limit, ErrLab)
	case offset < 0:
		return 0, fmt.Errorf("offset must be 0 or more, not %d: %w", offset, ErrLab)
	case limit == 0:
		return defaultPage, nil
	}
	return limit, nil
}
