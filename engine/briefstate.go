package engine

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/simjecture/simjecture/store"
)

// Lengths of the text an entry of the brief carries, in bytes.
const (
	briefStatement = 300
	briefNote      = 500
	briefRationale = 350
	briefNextTest  = 500
	briefError     = 300
	briefArgs      = 8
)

// BriefClaim is a claim in the brief.
type BriefClaim struct {
	ID        string  `json:"id"`
	Statement string  `json:"statement"`
	Parent    *string `json:"parent"`
	Status    string  `json:"status"`
}

// BriefExperiment is a receipt in the brief: what ran and how it ended.
type BriefExperiment struct {
	ID            string     `json:"id"`
	Status        ExpStatus  `json:"status"`
	Source        string     `json:"source,omitempty"`
	Capability    string     `json:"capability,omitempty"`
	Args          []string   `json:"args,omitempty"`
	Stage         string     `json:"stage"`
	Purpose       string     `json:"purpose,omitempty"`
	Commitment    string     `json:"commitment,omitempty"`
	ReturnCode    *int       `json:"returncode,omitempty"`
	LimitExceeded *string    `json:"limit_exceeded,omitempty"`
	WallSeconds   *float64   `json:"wall_seconds,omitempty"`
	Artifacts     []string   `json:"artifacts,omitempty"`
	Error         string     `json:"error,omitempty"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
}

// BriefReview is a review request in the brief, with its verdict cut short.
type BriefReview struct {
	ID          string   `json:"id"`
	Claim       string   `json:"claim"`
	Disposition string   `json:"disposition"`
	Status      string   `json:"status"`
	Decision    string   `json:"decision,omitempty"`
	Rationale   string   `json:"rationale,omitempty"`
	Gaps        []string `json:"evidence_gaps,omitempty"`
	NextTest    string   `json:"next_test,omitempty"`
}

// BriefNote is a current (not superseded) note in the brief.
type BriefNote struct {
	ID          int64    `json:"id"`
	Kind        NoteKind `json:"kind,omitempty"`
	Statement   string   `json:"statement"`
	Experiments []string `json:"experiments,omitempty"`
}

var finishedStatuses = []string{string(ExpSucceeded), string(ExpFailed), string(ExpTimedOut), string(ExpCancelled), string(ExpInterrupted)}

// readBriefState reads the unfitted brief: the header and at most
// briefSection entries of each section, never the whole study.
func readBriefState(tx *store.Tx, maxBytes int) (Brief, error) {
	snap, err := readHeader(tx)
	if err != nil {
		return Brief{}, err
	}
	b := Brief{StudyID: snap.StudyID, Status: snap.Status, RemainingSeconds: snap.RemainingSeconds,
		Retrieval: briefRetrieval, Omitted: map[string]int{}}
	b.Counts.Experiments = snap.ExperimentCounts
	if b.Counts.Reviews, err = tx.CountByStatus(store.Reviews); err != nil {
		return b, err
	}
	if b.Counts.Notes, err = tx.CountNotes(); err != nil {
		return b, err
	}
	if err := briefClaims(tx, &b, min(900, maxBytes/16)); err != nil {
		return b, err
	}
	if err := briefExperiments(tx, &b); err != nil {
		return b, err
	}
	if err := briefReviews(tx, &b); err != nil {
		return b, err
	}
	return b, briefNotes(tx, &b)
}

func briefClaims(tx *store.Tx, b *Brief, rootBytes int) error {
	claims, err := listDocs[Claim](tx, store.Claims)
	if err != nil {
		return err
	}
	b.Claims = []BriefClaim{}
	for _, c := range slices.Backward(claims) {
		if c.ID == RootClaim {
			b.Root = BriefClaim{ID: c.ID, Statement: abridge(c.Statement, rootBytes), Status: c.Status}
		} else if len(b.Claims) < briefSection {
			b.Claims = append(b.Claims, BriefClaim{ID: c.ID, Statement: abridge(c.Statement, briefStatement), Parent: c.Parent, Status: c.Status})
		}
	}
	return nil
}

func briefExperiments(tx *store.Tx, b *Brief) error {
	latest, err := pageBriefExperiments(tx, nil, 1)
	if err != nil || len(latest) == 0 {
		return err
	}
	b.LatestExperiment = &latest[0]
	if b.ActiveExperiments, err = pageBriefExperiments(tx, []string{string(ExpQueued), string(ExpRunning)}, briefSection+1); err != nil {
		return err
	}
	b.RecentExperiments, err = pageBriefExperiments(tx, finishedStatuses, briefSection+1)
	b.ActiveExperiments = withoutExperiment(b.ActiveExperiments, latest[0].ID)
	b.RecentExperiments = withoutExperiment(b.RecentExperiments, latest[0].ID)
	return err
}

func pageBriefExperiments(tx *store.Tx, statuses []string, n int) ([]BriefExperiment, error) {
	docs, err := tx.PageDocs(store.Experiments, statuses, n, 0)
	if err != nil {
		return nil, err
	}
	rs, err := decodeDocs[Receipt](store.Experiments, docs)
	if err != nil {
		return nil, err
	}
	out := make([]BriefExperiment, len(rs))
	for i, r := range rs {
		out[i] = briefExperiment(r)
	}
	return out, nil
}

func briefExperiment(r Receipt) BriefExperiment {
	e := BriefExperiment{ID: r.ID, Status: r.Status, Source: r.Source, Capability: r.Capability, Stage: r.Stage,
		Purpose: abridge(r.Purpose, briefStatement), Commitment: r.Commitment, ReturnCode: r.ReturnCode,
		LimitExceeded: r.LimitExceeded, WallSeconds: r.WallSeconds, Artifacts: sortedKeys(r.Artifacts),
		Error: abridge(r.Error, briefError), FinishedAt: r.FinishedAt}
	for _, a := range r.Args[:min(len(r.Args), briefArgs)] {
		e.Args = append(e.Args, abridge(a, 100))
	}
	return e
}

// withoutExperiment drops the anchor from a section and keeps it at briefSection.
func withoutExperiment(es []BriefExperiment, id string) []BriefExperiment {
	es = slices.DeleteFunc(es, func(e BriefExperiment) bool { return e.ID == id })
	return es[:min(len(es), briefSection)]
}

func briefReviews(tx *store.Tx, b *Brief) error {
	docs, err := tx.PageDocs(store.Reviews, []string{"resolved"}, briefSection+1, 0)
	if err != nil {
		return err
	}
	done, err := decodeDocs[Review](store.Reviews, docs)
	if err != nil {
		return err
	}
	b.RecentVerdicts = []BriefReview{}
	for i, r := range done {
		if i == 0 {
			v := briefReview(r)
			b.LatestVerdict = &v
		} else if len(b.RecentVerdicts) < briefSection {
			b.RecentVerdicts = append(b.RecentVerdicts, briefReview(r))
		}
	}
	docs, err = tx.PageDocs(store.Reviews, []string{"queued"}, briefSection, 0)
	if err != nil {
		return err
	}
	open, err := decodeDocs[Review](store.Reviews, docs)
	b.OpenReviews = make([]BriefReview, len(open))
	for i, r := range open {
		b.OpenReviews[i] = briefReview(r)
	}
	return err
}

func briefReview(r Review) BriefReview {
	out := BriefReview{ID: r.ID, Claim: r.Claim, Disposition: r.Disposition, Status: r.Status}
	if v := r.Verdict; v != nil {
		out.Decision, out.Rationale = v.Decision, abridge(v.Rationale, briefRationale)
		for _, g := range v.EvidenceGaps[:min(len(v.EvidenceGaps), 4)] {
			out.Gaps = append(out.Gaps, abridge(g, 200))
		}
		if v.NextTest != nil {
			out.NextTest = abridge(*v.NextTest, briefNextTest)
		}
	}
	return out
}

func briefNotes(tx *store.Tx, b *Brief) error {
	rows, err := tx.CurrentNotes([]string{string(NoteNextTest), string(NoteQuestion)}, briefSection)
	if err != nil {
		return err
	}
	notes, err := decodeNotes(rows)
	b.Notes = make([]BriefNote, len(notes))
	for i, n := range notes {
		b.Notes[i] = BriefNote{ID: n.ID, Kind: n.Kind, Statement: abridge(n.Statement, briefNote), Experiments: n.Experiments[:min(len(n.Experiments), 8)]}
	}
	return err
}

// abridge cuts s to at most n bytes on a rune boundary, marking the cut.
func abridge(s string, n int) string {
	const mark = "… [abridged]"
	if len(s) <= n {
		return s
	}
	cut := max(0, n-len(mark))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
