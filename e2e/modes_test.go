package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ledgerRecord is what a scientific demo's status --json says about its
// ledger, reduced to what must be identical under every execution backend.
type ledgerRecord struct {
	Status      string `json:"status"`
	Experiments []struct {
		Status    string            `json:"status"`
		Source    string            `json:"source"`
		Args      []string          `json:"args"`
		Stage     string            `json:"stage"`
		Claim     string            `json:"claim"`
		Inputs    map[string]string `json:"inputs"`
		Outputs   []string          `json:"outputs"`
		Isolation string            `json:"isolation_backend"`
		Code      *int              `json:"returncode"`
	} `json:"experiments"`
	Claims []struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		Kind      string `json:"kind"`
		Relation  string `json:"relation"`
		Decisive  int    `json:"decisive_contract_version"`
		Contracts []any  `json:"contracts"`
		Links     []struct {
			Experiment string `json:"experiment"`
			Counts     bool   `json:"counts"`
		} `json:"links"`
	} `json:"claims"`
	Reviews []struct {
		Stage   string `json:"stage"`
		Claim   string `json:"claim"`
		Status  string `json:"status"`
		Verdict *struct {
			Decision string `json:"decision"`
		} `json:"verdict"`
	} `json:"reviews"`
	Assignments []struct {
		Role    string `json:"role"`
		Claim   string `json:"claim"`
		Handoff *struct {
			Outcome string `json:"outcome"`
		} `json:"handoff"`
	} `json:"assignments"`
	States []struct {
		Claim string `json:"claim"`
		State string `json:"state"`
	} `json:"contract_states"`
}

// receipts renders the receipts without ids, times and the backend.
func (l ledgerRecord) receipts() []string {
	var out []string
	for _, e := range l.Experiments {
		out = append(out, fmt.Sprintf("%s %s %v %s %s %v %v rc=%v", e.Status, e.Source, e.Args, e.Stage, e.Claim, e.Inputs, e.Outputs, *e.Code))
	}
	slices.Sort(out)
	return out
}

// ledger renders the claims, reviews and assignments.
func (l ledgerRecord) ledger() string {
	var b strings.Builder
	for _, c := range l.Claims {
		fmt.Fprintf(&b, "claim %s %s %s %s decisive=%d contracts=%d links=%d;", c.ID, c.Kind, c.Relation, c.Status, c.Decisive, len(c.Contracts), len(c.Links))
	}
	for _, r := range l.Reviews {
		d := ""
		if r.Verdict != nil {
			d = r.Verdict.Decision
		}
		fmt.Fprintf(&b, "review %s %s %s %s;", r.Stage, r.Claim, r.Status, d)
	}
	for _, a := range l.Assignments {
		o := ""
		if a.Handoff != nil {
			o = a.Handoff.Outcome
		}
		fmt.Fprintf(&b, "assignment %s %s %s;", a.Role, a.Claim, o)
	}
	return b.String()
}

// TestScientificDemos: demo --mode structured and --mode frontier complete
// through the whole discipline under Bubblewrap (as root) and under
// process-cooperative (as uid 65534), with identical receipts and ledgers
// apart from ids, times and the backend's name.
func TestScientificDemos(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"structured", "frontier"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "demo")
			cmd := exec.Command(bin, "demo", "--mode", mode, "--batch", dir)
			cmd.Env = append(env(), "SIMJECTURE_DEFAULT_EXECUTION_BACKEND=bubblewrap")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("demo --mode %s under bubblewrap: %v\n%s", mode, err, out)
			}
			bw := readLedger(t, bin, dir, nil)
			checkDiscipline(t, mode, bw, "bubblewrap")
			coop, ok := nobodyDemo(t, mode)
			if !ok {
				return
			}
			checkDiscipline(t, mode, coop, "process-cooperative")
			if a, b := bw.receipts(), coop.receipts(); !slices.Equal(a, b) {
				t.Errorf("receipts differ:\nbubblewrap:          %v\nprocess-cooperative: %v", a, b)
			}
			if a, b := bw.ledger(), coop.ledger(); a != b {
				t.Errorf("ledgers differ:\nbubblewrap:          %s\nprocess-cooperative: %s", a, b)
			}
		})
	}
}

// nobodyDemo runs the demo as uid 65534 under process-cooperative.
func nobodyDemo(t *testing.T, mode string) (ledgerRecord, bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Log("skipping the process-cooperative half: needs root to drop to uid 65534 with setpriv")
		return ledgerRecord{}, false
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Log("skipping the process-cooperative half: setpriv is not installed")
		return ledgerRecord{}, false
	}
	tmp := nobodyDir(t)
	exe, work := filepath.Join(tmp, "simjecture"), filepath.Join(tmp, "work")
	copyExec(t, bin, exe)
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(work, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	drop := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", "env", "-i", "HOME=" + work,
		"PATH=/usr/local/bin:/usr/bin:/bin", "SIMJECTURE_DEFAULT_EXECUTION_BACKEND=process-cooperative", exe}
	dir := filepath.Join(work, "demo")
	out, err := exec.Command("setpriv", append(drop, "demo", "--mode", mode, "--batch", dir)...).CombinedOutput()
	if err != nil {
		t.Fatalf("demo --mode %s as uid 65534 under process-cooperative: %v\n%s", mode, err, out)
	}
	return readLedger(t, "setpriv", dir, drop), true
}

func readLedger(t *testing.T, exe, dir string, prefix []string) ledgerRecord {
	t.Helper()
	out, err := exec.Command(exe, append(prefix, "status", "--json", "--campaign", dir)...).Output()
	var l ledgerRecord
	if err != nil || json.Unmarshal(out, &l) != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return l
}

// checkDiscipline: the study completed through contract, review, evidence,
// link, falsification, repair and adjudication, every run under backend.
func checkDiscipline(t *testing.T, mode string, l ledgerRecord, backend string) {
	t.Helper()
	if l.Status != "completed" {
		t.Fatalf("%s under %s: status %s", mode, backend, l.Status)
	}
	stages := map[string]int{}
	for _, e := range l.Experiments {
		stages[e.Stage]++
		if e.Isolation != backend || e.Status != "succeeded" {
			t.Errorf("receipt %s %v: %s under %s", e.Source, e.Args, e.Status, e.Isolation)
		}
	}
	if stages["workbench"] != 1 || stages["evidence"] != 2 {
		t.Errorf("stages %v, want one workbench qualification and two evidence runs", stages)
	}
	want := "claim root scientific root falsified decisive=1 contracts=1 links=1;"
	if got := l.ledger(); !strings.HasPrefix(got, want) || !strings.Contains(got, "scientific repairs supported decisive=1") ||
		!strings.Contains(got, "review support") || strings.Count(got, "review contract") != 2 {
		t.Errorf("%s ledger: %s", mode, got)
	}
	roles := []string{}
	for _, a := range l.Assignments {
		roles = append(roles, a.Role)
	}
	wantRoles := map[string][]string{"structured": {"falsifier", "repair_scientist", "falsifier"}, "frontier": {"researcher"}}[mode]
	if !slices.Equal(roles, wantRoles) {
		t.Errorf("%s assignments %v, want %v", mode, roles, wantRoles)
	}
	for _, s := range l.States {
		if s.State != "approved" {
			t.Errorf("contract of %s is %s", s.Claim, s.State)
		}
	}
}
