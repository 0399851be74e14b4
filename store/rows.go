package store

import (
	"database/sql"
	"fmt"
	"strings"
)

// Kind names one of the document tables.
type Kind string

// The document tables. Each row is an id, an insertion order, a status and a
// JSON document owned by the engine.
const (
	Experiments Kind = "experiments"
	Claims      Kind = "claims"
	Reviews     Kind = "reviews"
	Approvals   Kind = "approvals"   // contract-review decisions, by packet hash
	Assignments Kind = "assignments" // role assignments of the scientific modes
)

func (k Kind) column() (string, error) {
	switch k {
	case Experiments:
		return "receipt_json", nil
	case Claims:
		return "claim_json", nil
	case Reviews:
		return "review_json", nil
	case Approvals:
		return "approval_json", nil
	case Assignments:
		return "assignment_json", nil
	}
	return "", fmt.Errorf("unknown document kind %q", k)
}

// Doc is one row of a document table.
type Doc struct {
	ID     string
	Seq    int64
	Status string
	JSON   []byte
}

// StudyRow is the frozen study record.
type StudyRow struct {
	StudyID      string
	ContractJSON []byte
	CreatedAt    string
	Deadline     string
}

// PutStudy writes the frozen study record; it may be written only once.
func (t *Tx) PutStudy(r StudyRow) error {
	_, err := t.tx.ExecContext(t.ctx,
		"INSERT INTO study (id, study_id, contract_json, created_at, deadline) VALUES (1, ?, ?, ?, ?)",
		r.StudyID, string(r.ContractJSON), r.CreatedAt, r.Deadline)
	if err != nil {
		return fmt.Errorf("record study: %w", err)
	}
	return nil
}

// GetStudy reads the frozen study record.
func (t *Tx) GetStudy() (StudyRow, error) {
	var r StudyRow
	var contract string
	err := t.tx.QueryRowContext(t.ctx,
		"SELECT study_id, contract_json, created_at, deadline FROM study WHERE id = 1").
		Scan(&r.StudyID, &contract, &r.CreatedAt, &r.Deadline)
	if err != nil {
		return r, notFound("study", err)
	}
	r.ContractJSON = []byte(contract)
	return r, nil
}

// PutSupervisor replaces the supervisor state document.
func (t *Tx) PutSupervisor(state []byte, now string) error {
	_, err := t.tx.ExecContext(t.ctx,
		`INSERT INTO supervisor (id, state_json, updated_at) VALUES (1, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET state_json = excluded.state_json, updated_at = excluded.updated_at`,
		string(state), now)
	if err != nil {
		return fmt.Errorf("record supervisor state: %w", err)
	}
	return nil
}

// GetSupervisor reads the supervisor state document.
func (t *Tx) GetSupervisor() ([]byte, error) {
	var s string
	err := t.tx.QueryRowContext(t.ctx, "SELECT state_json FROM supervisor WHERE id = 1").Scan(&s)
	if err != nil {
		return nil, notFound("supervisor state", err)
	}
	return []byte(s), nil
}

// SetControl records an operator request (pause or cancel) for the supervisor.
func (t *Tx) SetControl(command, now string) error {
	_, err := t.tx.ExecContext(t.ctx,
		`INSERT INTO control (id, command, requested_at) VALUES (1, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET command = excluded.command, requested_at = excluded.requested_at`,
		command, now)
	if err != nil {
		return fmt.Errorf("record control request: %w", err)
	}
	return nil
}

// GetControl returns the pending operator request, or "" when there is none.
func (t *Tx) GetControl() (string, error) {
	var c string
	err := t.tx.QueryRowContext(t.ctx, "SELECT command FROM control WHERE id = 1").Scan(&c)
	if isNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read control request: %w", err)
	}
	return c, nil
}

// ClearControl removes the pending operator request.
func (t *Tx) ClearControl() error {
	if _, err := t.tx.ExecContext(t.ctx, "DELETE FROM control"); err != nil {
		return fmt.Errorf("clear control request: %w", err)
	}
	return nil
}

// PutDoc inserts or replaces a document; a new id gets the next order number.
// It reports whether the row was new.
func (t *Tx) PutDoc(k Kind, id, status string, doc []byte) (bool, error) {
	col, err := k.column()
	if err != nil {
		return false, err
	}
	var exists int
	err = t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM "+string(k)+" WHERE id = ?", id).Scan(&exists)
	if err != nil {
		return false, fmt.Errorf("look up %s %s: %w", k, id, err)
	}
	if exists > 0 {
		_, err = t.tx.ExecContext(t.ctx, "UPDATE "+string(k)+" SET status = ?, "+col+" = ? WHERE id = ?",
			status, string(doc), id)
	} else {
		_, err = t.tx.ExecContext(t.ctx, "INSERT INTO "+string(k)+" (id, seq, status, "+col+
			") VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM "+string(k)+"), ?, ?)", id, status, string(doc))
	}
	if err != nil {
		return false, fmt.Errorf("record %s %s: %w", k, id, err)
	}
	return exists == 0, nil
}

// GetDoc reads one document.
func (t *Tx) GetDoc(k Kind, id string) (Doc, error) {
	col, err := k.column()
	if err != nil {
		return Doc{}, err
	}
	row := t.tx.QueryRowContext(t.ctx, "SELECT id, seq, status, "+col+" FROM "+string(k)+" WHERE id = ?", id)
	d, err := scanDoc(row.Scan)
	if err != nil {
		return d, notFound(fmt.Sprintf("%s %s", k, id), err)
	}
	return d, nil
}

// ListDocs lists documents in insertion order; with statuses, only those.
func (t *Tx) ListDocs(k Kind, statuses ...string) ([]Doc, error) {
	col, err := k.column()
	if err != nil {
		return nil, err
	}
	q := "SELECT id, seq, status, " + col + " FROM " + string(k)
	args := make([]any, 0, len(statuses))
	if len(statuses) > 0 {
		q += " WHERE status IN (?" + strings.Repeat(",?", len(statuses)-1) + ")"
		for _, s := range statuses {
			args = append(args, s)
		}
	}
	return t.queryDocs(k, q+" ORDER BY seq", args...)
}

// ListDocsNewest lists the newest limit documents (by insertion), oldest
// of them first.
func (t *Tx) ListDocsNewest(k Kind, limit int) ([]Doc, error) {
	col, err := k.column()
	if err != nil {
		return nil, err
	}
	q := "SELECT id, seq, status, " + col + " FROM (SELECT * FROM " + string(k) +
		" ORDER BY seq DESC LIMIT ?) ORDER BY seq"
	return t.queryDocs(k, q, limit)
}

// EachDoc calls fn with every document of kind k, in insertion order,
// reading them one at a time (memory does not grow with their number).
func (t *Tx) EachDoc(k Kind, fn func(Doc) error) error {
	col, err := k.column()
	if err != nil {
		return err
	}
	rows, err := t.tx.QueryContext(t.ctx, "SELECT id, seq, status, "+col+" FROM "+string(k)+" ORDER BY seq")
	if err != nil {
		return fmt.Errorf("list %s: %w", k, err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDoc(rows.Scan)
		if err != nil {
			return fmt.Errorf("list %s: %w", k, err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *Tx) queryDocs(k Kind, q string, args ...any) ([]Doc, error) {
	rows, err := t.tx.QueryContext(t.ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", k, err)
	}
	defer rows.Close()
	var out []Doc
	for rows.Next() {
		d, err := scanDoc(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", k, err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func scanDoc(scan func(...any) error) (Doc, error) {
	var d Doc
	var body string
	if err := scan(&d.ID, &d.Seq, &d.Status, &body); err != nil {
		return d, err
	}
	d.JSON = []byte(body)
	return d, nil
}

// PutUsage replaces the token totals of one thread: a resumed thread reports
// running totals, so they replace, never add.
func (t *Tx) PutUsage(thread string, in, out *int64) error {
	_, err := t.tx.ExecContext(t.ctx,
		`INSERT INTO usage (thread, input_tokens, output_tokens) VALUES (?, ?, ?)
		 ON CONFLICT (thread) DO UPDATE SET input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens`,
		thread, nullable(in), nullable(out))
	if err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	return nil
}

// SumUsage adds the totals of every thread; nil when nothing was reported.
func (t *Tx) SumUsage() (in, out *int64, err error) {
	var a, b sql.NullInt64
	err = t.tx.QueryRowContext(t.ctx, "SELECT sum(input_tokens), sum(output_tokens) FROM usage").Scan(&a, &b)
	if err != nil {
		return nil, nil, fmt.Errorf("read usage: %w", err)
	}
	if a.Valid {
		in = &a.Int64
	}
	if b.Valid {
		out = &b.Int64
	}
	return in, out, nil
}

// UsageRow is one thread's token totals; nil when not reported.
type UsageRow struct {
	Thread        string
	Input, Output *int64
}

// ListUsage lists every thread's totals, by thread.
func (t *Tx) ListUsage() ([]UsageRow, error) {
	rows, err := t.tx.QueryContext(t.ctx, "SELECT thread, input_tokens, output_tokens FROM usage ORDER BY thread")
	if err != nil {
		return nil, fmt.Errorf("list usage: %w", err)
	}
	defer rows.Close()
	var out []UsageRow
	for rows.Next() {
		var u UsageRow
		var in, o sql.NullInt64
		if err := rows.Scan(&u.Thread, &in, &o); err != nil {
			return nil, fmt.Errorf("list usage: %w", err)
		}
		if in.Valid {
			u.Input = &in.Int64
		}
		if o.Valid {
			u.Output = &o.Int64
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

func nullable(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// CountByStatus counts a table's documents per status.
func (t *Tx) CountByStatus(k Kind) (map[string]int, error) {
	if _, err := k.column(); err != nil {
		return nil, err
	}
	rows, err := t.tx.QueryContext(t.ctx, "SELECT status, count(*) FROM "+string(k)+" GROUP BY status")
	if err != nil {
		return nil, fmt.Errorf("count %s: %w", k, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, fmt.Errorf("count %s: %w", k, err)
		}
		out[s] = n
	}
	return out, rows.Err()
}

// PageDocs lists documents newest first (by insertion), skipping offset and
// returning at most limit; with statuses, only those. It reads through the
// seq and (status, seq) indexes, so a page costs the same in a table of any size.
func (t *Tx) PageDocs(k Kind, statuses []string, limit, offset int) ([]Doc, error) {
	col, err := k.column()
	if err != nil {
		return nil, err
	}
	q := "SELECT id, seq, status, " + col + " FROM " + string(k)
	args := make([]any, 0, len(statuses)+2)
	if len(statuses) > 0 {
		q += " WHERE status IN (?" + strings.Repeat(",?", len(statuses)-1) + ")"
		for _, s := range statuses {
			args = append(args, s)
		}
	}
	return t.queryDocs(k, q+" ORDER BY seq DESC LIMIT ? OFFSET ?", append(args, limit, offset)...)
}
