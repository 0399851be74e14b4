package store

import (
	"context"
	"fmt"
)

// IntegrityCheck runs SQLite's PRAGMA integrity_check and returns one
// finding per problem it reports; none means the file is sound. A database
// too damaged for the check to run is a finding too, not an error: verify
// reports it like any other.
func (s *Store) IntegrityCheck(ctx context.Context) []string {
	rows, err := s.r.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return []string{fmt.Sprintf("store: SQLite reports the database as malformed (%v)", err)}
	}
	defer rows.Close()
	var findings []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return append(findings, fmt.Sprintf("store: SQLite reports the database as malformed (%v)", err))
		}
		if line != "ok" {
			findings = append(findings, "store: SQLite integrity check: "+line)
		}
	}
	if err := rows.Err(); err != nil {
		findings = append(findings, fmt.Sprintf("store: SQLite reports the database as malformed (%v)", err))
	}
	return findings
}
