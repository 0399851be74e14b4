package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/simjecture/simjecture/store"
)

// Report is report.json: the snapshot plus the audit of what was accepted.
type Report struct {
	Snapshot
	Audit     Audit     `json:"audit"`
	EventHead EventHead `json:"event_head"` // the newest event when this was written
	// Format is the rendering of report.json and LEDGER.md (ReportFormat)
	// this binary wrote them in; reports written before it had none.
	Format int `json:"report_format"`
}

// ReportFormat numbers the rendering of report.json and LEDGER.md: bump it
// whenever a change to this binary renders the same record differently
// (a field added, a ledger cell escaped otherwise). verify compares
// reports of this format byte for byte, and those of another by what
// report.json says (verifyreport.go).
const ReportFormat = 2

// Audit says what the study established, in the reviewer's words only.
type Audit struct {
	ScientificStatus string            `json:"scientific_status"` // accepted or unresolved
	Completed        bool              `json:"completed"`
	Accepted         map[string]string `json:"accepted"` // claim id → accepted disposition
	Backends         []string          `json:"isolation_backends"`
}

// WriteReports writes report.json and LEDGER.md atomically, streaming
// the receipts from one read of the store (streamReports).
func WriteReports(ctx context.Context, c Campaign, s *store.Store) error {
	report, err := createAtomic(filepath.Join(c.Dir, "report.json"))
	if err != nil {
		return err
	}
	ledger, err := createAtomic(filepath.Join(c.Dir, "LEDGER.md"))
	if err != nil {
		report.abort()
		return err
	}
	err = s.Read(ctx, func(tx *store.Tx) error { return streamReports(tx, c, report.w, ledger.w) })
	if err != nil {
		report.abort()
		ledger.abort()
		return err
	}
	if err := report.commit(); err != nil {
		ledger.abort()
		return err
	}
	return ledger.commit()
}

// reportFile is one report and its content.
type reportFile struct {
	name string
	body []byte
}

// reportFiles renders report.json and LEDGER.md, in the order they are
// written.
func reportFiles(ctx context.Context, c Campaign, s *store.Store) ([]reportFile, error) {
	snap, err := LoadSnapshot(ctx, c, s)
	if err != nil {
		return nil, err
	}
	rep := Report{Snapshot: snap, Audit: audit(snap), Format: ReportFormat}
	err = s.Read(ctx, func(tx *store.Tx) error {
		head, err := tx.Head()
		rep.EventHead = EventHead{Seq: head.Seq, Hash: head.Hash}
		return err
	})
	if err != nil {
		return nil, err
	}
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return []reportFile{{"report.json", append(body, '\n')}, {"LEDGER.md", []byte(Ledger(rep))}}, nil
}

func audit(s Snapshot) Audit {
	a := Audit{ScientificStatus: "unresolved", Accepted: map[string]string{}, Backends: []string{}}
	a.Completed = Completed(s.Claims, s.CompletionPolicy)
	if slices.Contains(ScientificModes, s.Mode) {
		a.Completed = ScientificCompleted(s.Claims, s.Reviews)
	}
	if a.Completed {
		a.ScientificStatus = "accepted"
	}
	for _, c := range s.Claims {
		if c.Status != ClaimOpen {
			a.Accepted[c.ID] = c.Status
		}
	}
	seen := map[string]bool{}
	for _, r := range s.Experiments {
		if b := string(r.IsolationBackend); b != "" && !seen[b] {
			seen[b] = true
			a.Backends = append(a.Backends, b)
		}
	}
	return a
}

// Ledger renders the human-readable LEDGER.md.
func Ledger(r Report) string {
	var b strings.Builder
	ledgerSummary(&b, r)
	writeScience(&b, r.Snapshot)
	b.WriteString(experimentsHeader)
	for _, e := range r.Experiments {
		b.WriteString(experimentRow(e))
	}
	b.WriteString(ledgerTail)
	return b.String()
}

// ledgerSummary writes LEDGER.md's study lines, claims and reviews.
func ledgerSummary(b *strings.Builder, r Report) {
	fmt.Fprintf(b, "# Study ledger — %s\n\n", r.StudyID)
	fmt.Fprintf(b, "- Status: **%s** (scientific status: %s)\n", r.Status, r.Audit.ScientificStatus)
	fmt.Fprintf(b, "- Agent: %s / %s · execution backend: %s\n", r.AgentBackend, PrintableLine(r.Model), r.ExecutionBackend)
	fmt.Fprintf(b, "- Created %s · deadline %s · %d turns\n\n", r.CreatedAt.Format("2006-01-02 15:04:05Z"), r.Deadline.Format("2006-01-02 15:04:05Z"), r.Turn)
	if r.Status == StatusPausedExternalError && r.Provider.Attention != nil {
		fmt.Fprintf(b, "> Needs the operator: %s\n\n", PrintableLine(*r.Provider.Attention))
	}
	b.WriteString("## Claims\n\n| id | status | parent | statement |\n|---|---|---|---|\n")
	for _, c := range r.Claims {
		parent := "—"
		if c.Parent != nil {
			parent = *c.Parent
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", c.ID, c.Status, parent, cell(c.Statement))
	}
	b.WriteString("\n## Reviews\n\n| id | claim | requested | status | decision | rationale |\n|---|---|---|---|---|---|\n")
	for _, v := range r.Reviews {
		dec, why := "—", cell(v.LastError)
		if v.Verdict != nil {
			dec, why = v.Verdict.Decision, cell(v.Verdict.Rationale)
		}
		requested := v.Disposition
		if v.Stage != "" {
			requested = fmt.Sprintf("%s review of v%d", v.Stage, v.ContractVersion)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", v.ID, v.Claim, requested, v.Status, dec, why)
	}
}

// experimentsHeader begins LEDGER.md's experiment table.
const experimentsHeader = "\n## Experiments\n\n| id | status | backend | source | args | wall s | peak RSS MiB | limit |\n|---|---|---|---|---|---|---|---|\n"

// experimentRow is e's row of LEDGER.md's experiment table.
func experimentRow(e Receipt) string {
	wall, rss, limit := "—", "—", "—"
	if e.WallSeconds != nil {
		wall = fmt.Sprintf("%.2f", *e.WallSeconds)
	}
	if e.PeakRSSBytes != nil {
		rss = fmt.Sprintf("%.1f", float64(*e.PeakRSSBytes)/(1<<20))
	}
	if e.LimitExceeded != nil {
		limit = *e.LimitExceeded
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", e.ID, e.Status, e.IsolationBackend, cell(e.Source),
		cell(strings.Join(e.Args, " ")), wall, rss, limit)
}

// cell is s as one table cell of LEDGER.md: on one line, its control
// characters escaped (an agent's text must not drive the terminal that
// shows the file: PrintableLine), its pipes escaped, and at most 160
// characters, cut between two of them.
func cell(s string) string {
	s = strings.ReplaceAll(PrintableLine(s), "|", "\\|")
	if utf8.RuneCountInString(s) > 160 {
		s = string([]rune(s)[:157]) + "…"
	}
	return s
}
