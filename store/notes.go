package store

import (
	"database/sql"
	"fmt"
	"strings"
)

// NoteRow is one note: its number, kind, the note it supersedes (0 for
// none) and the engine's JSON document.
type NoteRow struct {
	Seq        int64
	Kind       string
	Supersedes int64
	JSON       []byte
}

// AddNote appends a note and returns its number. A note may be superseded
// only once: a second successor of the same note is refused.
func (t *Tx) AddNote(kind string, supersedes int64, doc []byte) (int64, error) {
	var sup any
	if supersedes != 0 {
		sup = supersedes
	}
	res, err := t.tx.ExecContext(t.ctx, "INSERT INTO notes (kind, supersedes, note_json) VALUES (?, ?, ?)",
		kind, sup, string(doc))
	if err != nil {
		return 0, fmt.Errorf("record note: %w", err)
	}
	return res.LastInsertId()
}

const noteCols = "seq, kind, coalesce(supersedes, 0), note_json"

// ListNotes lists every note, oldest first.
func (t *Tx) ListNotes() ([]NoteRow, error) {
	return t.queryNotes("SELECT " + noteCols + " FROM notes ORDER BY seq")
}

// GetNote reads one note.
func (t *Tx) GetNote(seq int64) (NoteRow, error) {
	rows, err := t.queryNotes("SELECT "+noteCols+" FROM notes WHERE seq = ?", seq)
	if err != nil {
		return NoteRow{}, err
	}
	if len(rows) == 0 {
		return NoteRow{}, notFound(fmt.Sprintf("note %d", seq), sql.ErrNoRows)
	}
	return rows[0], nil
}

// PageNotes lists notes newest first, skipping offset and returning at most
// limit; with a kind, only notes of that kind.
func (t *Tx) PageNotes(kind string, limit, offset int) ([]NoteRow, error) {
	if kind == "" {
		return t.queryNotes("SELECT "+noteCols+" FROM notes ORDER BY seq DESC LIMIT ? OFFSET ?", limit, offset)
	}
	return t.queryNotes("SELECT "+noteCols+" FROM notes WHERE kind = ? ORDER BY seq DESC LIMIT ? OFFSET ?",
		kind, limit, offset)
}

// CurrentNotes lists at most limit notes no later note supersedes, in the
// order a reader needs them: kinds in the order given first, then the
// rest; newest first within each.
func (t *Tx) CurrentNotes(firstKinds []string, limit int) ([]NoteRow, error) {
	var rank strings.Builder
	args := make([]any, 0, len(firstKinds)+1)
	rank.WriteString("CASE kind")
	for i, k := range firstKinds {
		fmt.Fprintf(&rank, " WHEN ? THEN %d", i)
		args = append(args, k)
	}
	fmt.Fprintf(&rank, " ELSE %d END", len(firstKinds))
	q := "SELECT " + noteCols + " FROM notes n WHERE NOT EXISTS (SELECT 1 FROM notes s WHERE s.supersedes = n.seq)" +
		" ORDER BY " + rank.String() + ", seq DESC LIMIT ?"
	return t.queryNotes(q, append(args, limit)...)
}

// Successors maps each of the given notes that a later note supersedes to
// that later note.
func (t *Tx) Successors(seqs []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(seqs) == 0 {
		return out, nil
	}
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = s
	}
	rows, err := t.tx.QueryContext(t.ctx, "SELECT supersedes, seq FROM notes WHERE supersedes IN (?"+
		strings.Repeat(",?", len(seqs)-1)+")", args...)
	if err != nil {
		return nil, fmt.Errorf("list note successors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var old, next int64
		if err := rows.Scan(&old, &next); err != nil {
			return nil, fmt.Errorf("list note successors: %w", err)
		}
		out[old] = next
	}
	return out, rows.Err()
}

// CountNotes counts the notes; with a kind, only those of that kind.
func (t *Tx) CountNotes(kind ...string) (int, error) {
	q, args := "SELECT count(*) FROM notes", []any{}
	if len(kind) > 0 {
		q, args = q+" WHERE kind = ?", []any{kind[0]}
	}
	var n int
	if err := t.tx.QueryRowContext(t.ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count notes: %w", err)
	}
	return n, nil
}

func (t *Tx) queryNotes(q string, args ...any) ([]NoteRow, error) {
	rows, err := t.tx.QueryContext(t.ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	defer rows.Close()
	var out []NoteRow
	for rows.Next() {
		var n NoteRow
		var body string
		if err := rows.Scan(&n.Seq, &n.Kind, &n.Supersedes, &body); err != nil {
			return nil, fmt.Errorf("list notes: %w", err)
		}
		n.JSON = []byte(body)
		out = append(out, n)
	}
	return out, rows.Err()
}
