package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// Report is report.json: the snapshot plus the audit of what was accepted.
type Report struct {
	Snapshot
	Audit     Audit     `json:"audit"`
	EventHead EventHead `json:"event_head"` // the newest event when this was written
}

// Audit says what the study established, in the reviewer's words only.
type Audit struct {
	ScientificStatus string            `json:"scientific_status"` // accepted or unresolved
	Completed        bool              `json:"completed"`
	Accepted         map[string]string `json:"accepted"` // claim id → accepted disposition
	Backends         []string          `json:"isolation_backends"`
}

// WriteReports writes report.json and LEDGER.md atomically.
func WriteReports(ctx context.Context, c Campaign, s *store.Store) error {
	files, err := reportFiles(ctx, c, s)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := writeAtomic(filepath.Join(c.Dir, f.name), f.body); err != nil {
			return err
		}
	}
	return nil
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
	rep := Report{Snapshot: snap, Audit: audit(snap)}
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

func writeAtomic(path string, body []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	// No fsync: the rename is atomic against a crash of the process, which is
	// what the reports must survive; the store holds the durable truth, and
	// the reports are rewritten from it at every state change and exit.
	if _, err := tmp.Write(body); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_ = os.Chmod(tmp.Name(), 0o644)
	return os.Rename(tmp.Name(), path)
}

// Ledger renders the human-readable LEDGER.md.
func Ledger(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Study ledger — %s\n\n", r.StudyID)
	fmt.Fprintf(&b, "- Status: **%s** (scientific status: %s)\n", r.Status, r.Audit.ScientificStatus)
	fmt.Fprintf(&b, "- Agent: %s / %s · execution backend: %s\n", r.AgentBackend, r.Model, r.ExecutionBackend)
	fmt.Fprintf(&b, "- Created %s · deadline %s · %d turns\n\n", r.CreatedAt.Format("2006-01-02 15:04:05Z"), r.Deadline.Format("2006-01-02 15:04:05Z"), r.Turn)
	if r.Status == StatusPausedExternalError && r.Provider.Attention != nil {
		fmt.Fprintf(&b, "> Needs the operator: %s\n\n", *r.Provider.Attention)
	}
	b.WriteString("## Claims\n\n| id | status | parent | statement |\n|---|---|---|---|\n")
	for _, c := range r.Claims {
		parent := "—"
		if c.Parent != nil {
			parent = *c.Parent
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.ID, c.Status, parent, cell(c.Statement))
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
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", v.ID, v.Claim, requested, v.Status, dec, why)
	}
	writeScience(&b, r.Snapshot)
	writeExperiments(&b, r.Experiments)
	b.WriteString("\nIncomplete is not a scientific result: only claims accepted by the independent reviewer count.\n")
	return b.String()
}

func writeExperiments(b *strings.Builder, exps []Receipt) {
	b.WriteString("\n## Experiments\n\n| id | status | backend | source | args | wall s | peak RSS MiB | limit |\n|---|---|---|---|---|---|---|---|\n")
	for _, e := range exps {
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
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", e.ID, e.Status, e.IsolationBackend, cell(e.Source),
			cell(strings.Join(e.Args, " ")), wall, rss, limit)
	}
}

func cell(s string) string {
	s = strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
	if len(s) > 160 {
		s = s[:157] + "…"
	}
	return s
}
