package store

import (
	"database/sql"
	"fmt"
)

// SteeringRow is one message of operator guidance. RequestKey and
// DeliveredAt are "" when absent.
type SteeringRow struct {
	Seq         int64
	ID          string
	RequestKey  string
	Text        string
	CreatedAt   string
	DeliveredAt string
	TextSHA256  string // sha256 of Text when queued; "" for messages queued before it was kept
}

const steeringCols = "seq, id, coalesce(request_key, ''), text, created_at, coalesce(delivered_at, ''), coalesce(text_sha256, '')"

// AddSteering appends a message of guidance; a request key already used is
// refused by the table.
func (t *Tx) AddSteering(r SteeringRow) (int64, error) {
	var key any
	if r.RequestKey != "" {
		key = r.RequestKey
	}
	var sum any
	if r.TextSHA256 != "" {
		sum = r.TextSHA256
	}
	res, err := t.tx.ExecContext(t.ctx, "INSERT INTO steering (id, request_key, text, created_at, text_sha256) VALUES (?, ?, ?, ?, ?)",
		r.ID, key, r.Text, r.CreatedAt, sum)
	if err != nil {
		return 0, fmt.Errorf("record steering: %w", err)
	}
	return res.LastInsertId()
}

// SteeringByKey reads the message stored under a request key; found is
// false when there is none.
func (t *Tx) SteeringByKey(key string) (row SteeringRow, found bool, err error) {
	rows, err := t.querySteering("SELECT "+steeringCols+" FROM steering WHERE request_key = ?", key)
	if err != nil || len(rows) == 0 {
		return SteeringRow{}, false, err
	}
	return rows[0], true, nil
}

// ListSteering lists every message, oldest first.
func (t *Tx) ListSteering() ([]SteeringRow, error) {
	return t.querySteering("SELECT " + steeringCols + " FROM steering ORDER BY seq")
}

// CountSteering counts the messages.
func (t *Tx) CountSteering() (int, error) {
	var n int
	if err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM steering").Scan(&n); err != nil {
		return 0, fmt.Errorf("count steering: %w", err)
	}
	return n, nil
}

// SteeringIDs lists the ids of every message, oldest first.
func (t *Tx) SteeringIDs() ([]string, error) {
	rows, err := t.tx.QueryContext(t.ctx, "SELECT id FROM steering ORDER BY seq")
	if err != nil {
		return nil, fmt.Errorf("list steering ids: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list steering ids: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// UndeliveredSteering lists at most limit messages no prompt has carried,
// oldest first.
func (t *Tx) UndeliveredSteering(limit int) ([]SteeringRow, error) {
	return t.querySteering("SELECT "+steeringCols+" FROM steering WHERE delivered_at IS NULL ORDER BY seq LIMIT ?", limit)
}

// LatestDeliveredSteering lists at most limit delivered messages, the
// newest of them, oldest first.
func (t *Tx) LatestDeliveredSteering(limit int) ([]SteeringRow, error) {
	return t.querySteering("SELECT "+steeringCols+" FROM (SELECT * FROM steering WHERE delivered_at IS NOT NULL"+
		" ORDER BY seq DESC LIMIT ?) ORDER BY seq", limit)
}

// MarkSteeringDelivered stamps an undelivered message delivered at at; a
// message already delivered keeps its first time.
func (t *Tx) MarkSteeringDelivered(seq int64, at string) error {
	res, err := t.tx.ExecContext(t.ctx, "UPDATE steering SET delivered_at = ? WHERE seq = ? AND delivered_at IS NULL", at, seq)
	if err != nil {
		return fmt.Errorf("mark steering %d delivered: %w", seq, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("mark steering %d delivered: %w", seq, notFound("undelivered steering", sql.ErrNoRows))
	}
	return nil
}

func (t *Tx) querySteering(q string, args ...any) ([]SteeringRow, error) {
	rows, err := t.tx.QueryContext(t.ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list steering: %w", err)
	}
	defer rows.Close()
	var out []SteeringRow
	for rows.Next() {
		var r SteeringRow
		if err := rows.Scan(&r.Seq, &r.ID, &r.RequestKey, &r.Text, &r.CreatedAt, &r.DeliveredAt, &r.TextSHA256); err != nil {
			return nil, fmt.Errorf("list steering: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
