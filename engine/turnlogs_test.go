package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// loggingAgent runs each turn with its inner agent and then writes the
// turn's folder as a provider does: prompt.txt, stdout.log (the verdict
// for a reviewer), stderr.log, and for a worker a file of its own in a
// sub-folder. lingering marks every outcome as one whose tree outlived it.
type loggingAgent struct {
	provider.Agent
	lingering bool
}

func (a *loggingAgent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	out, err := a.Agent.RunTurn(ctx, t)
	if err != nil {
		return out, err
	}
	files := map[string]string{"prompt.txt": t.Prompt, "stdout.log": out.LastLine + "\n", "stderr.log": t.Role + " done\n"}
	if t.Role == provider.RoleWorker {
		files["session/state.json"] = fmt.Sprintf(`{"turn":%d}`, t.Number)
	}
	for rel, body := range files {
		p := filepath.Join(t.LogDir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return out, err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return out, err
		}
	}
	out.Lingering = a.lingering
	return out, nil
}

// reviewOnce runs one experiment each turn and, once it has succeeded,
// asks once for a falsification review of root.
func reviewOnce(t *testing.T, c Campaign, s *store.Store) func(int) provider.Outcome {
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	var asked atomic.Bool
	return func(int) provider.Outcome {
		ctx := context.Background()
		got, err := lab.Call(ctx, "run", []byte(`{"source":"sim.py","outputs":["r.json"]}`))
		if err != nil {
			t.Error(err)
			return provider.Outcome{LastLine: "run refused"}
		}
		id := got.(Receipt).ID
		if r, _ := lab.receipt(ctx, id); r.Status == ExpSucceeded && !asked.Swap(true) {
			body := fmt.Sprintf(`{"disposition":"falsified","conclusion":"it fails","experiments":[%q]}`, id)
			if _, err := lab.Call(ctx, "review", []byte(body)); err != nil {
				t.Error(err)
			}
		}
		return provider.Outcome{LastLine: "worker turn done"}
	}
}

// loggedStudy runs a study to completion whose first review attempt is
// malformed (review_failed) and whose second approves (review_resolved).
func loggedStudy(t *testing.T, lingering bool) (Campaign, *store.Store, Review) {
	t.Helper()
	c, s := newTestStudy(t, func(r *Request) { r.CompletionPolicy = "answer" })
	var reviews atomic.Int32
	agent := &loggingAgent{lingering: lingering, Agent: &fakeAgent{worker: reviewOnce(t, c, s), review: func(p Packet) string {
		if reviews.Add(1) == 1 {
			return `{"decision":"approved"}`
		}
		return approve(p)
	}}}
	final, _ := runSupervisor(t, c, agent, Options{IdlePause: func(int) time.Duration { return 0 }})
	snap, err := LoadSnapshot(context.Background(), c, s)
	if err != nil || final != StatusCompleted || len(snap.Reviews) != 1 || snap.Reviews[0].Attempts != 2 {
		t.Fatalf("final %s, reviews %+v (%v): want completed after two review attempts", final, snap.Reviews, err)
	}
	return c, s, snap.Reviews[0]
}

func verifyFindings(t *testing.T, c Campaign, s *store.Store) []string {
	t.Helper()
	findings, err := Verify(context.Background(), c, s)
	if err != nil {
		t.Fatal(err)
	}
	return findings
}

// TestVerifyFindsChangedTurnLogs edits, one at a time, each kind of file
// of a worker turn's and of both review attempts' folders: verify must
// name the file, and pass again once it is restored.
func TestVerifyFindsChangedTurnLogs(t *testing.T) {
	c, s, r := loggedStudy(t, false)
	if f := verifyFindings(t, c, s); len(f) != 0 {
		t.Fatalf("verify of the untouched study: %v", f)
	}
	failed, resolved := "supervisor/"+reviewDirName(r, 1), "supervisor/"+reviewDirName(r, 2)
	edit := func(p string) error { return os.WriteFile(p, []byte("a nicer story\n"), 0o644) }
	tests := []struct {
		name, rel string
		tamper    func(path string) error
		want      string
	}{
		{"worker stdout", "supervisor/turn-00001/stdout.log", edit, "changed since its turn ended"},
		{"worker stderr", "supervisor/turn-00001/stderr.log", edit, "changed since its turn ended"},
		{"worker prompt", "supervisor/turn-00001/prompt.txt", edit, "changed since its turn ended"},
		{"worker backend file", "supervisor/turn-00001/session/state.json", edit, "changed since its turn ended"},
		{"worker stdout removed", "supervisor/turn-00002/stdout.log", os.Remove, "is missing since its turn ended"},
		{"resolved review's verdict", resolved + "/stdout.log", edit, "changed since its review attempt ended"},
		{"resolved review's prompt", resolved + "/prompt.txt", edit, "changed since its review attempt ended"},
		{"resolved review's stderr", resolved + "/stderr.log", edit, "changed since its review attempt ended"},
		{"failed review's verdict", failed + "/stdout.log", edit, "changed since its review attempt ended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(c.Dir, filepath.FromSlash(tt.rel))
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.tamper(path); err != nil {
				t.Fatal(err)
			}
			f := verifyFindings(t, c, s)
			if want := tt.rel + " " + tt.want; len(f) != 1 || f[0] != want {
				t.Errorf("verify after editing %s: %q, want exactly %q", tt.rel, f, want)
			}
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			if f := verifyFindings(t, c, s); len(f) != 0 {
				t.Errorf("verify after restoring %s: %v", tt.rel, f)
			}
		})
	}
}

// TestTurnLogsNotHashedWhileTheTreeLingers: a turn whose process tree
// outlived it records no hashes (its files may still change), so a later
// change is not a finding; its turn_ended event is still written.
func TestTurnLogsNotHashedWhileTheTreeLingers(t *testing.T) {
	c, s, _ := loggedStudy(t, true)
	if err := os.WriteFile(filepath.Join(c.Dir, "supervisor", "turn-00001", "stdout.log"), []byte("late\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := verifyFindings(t, c, s); len(f) != 0 {
		t.Errorf("verify of a study whose turns lingered: %v, want no findings", f)
	}
	if n := countEvents(t, s, string(EvTurnEnded)); n < 2 {
		t.Errorf("%d turn_ended events, want one per worker turn", n)
	}
}

// TestLoggedEvent decodes the logs of an event: old payloads without the
// field, and a note whose text mentions one, record nothing.
func TestLoggedEvent(t *testing.T) {
	tests := []struct {
		typ     EventType
		payload string
		want    int
		turn    bool
	}{
		{EvReviewFailed, `{"attempt":1,"error":"e","review":"r"}`, 0, false},
		{EvTurnEnded, `{"turn":3}`, 0, false},
		{EvNoteAdded, `{"id":1,"statement":"{\"logs\":{\"supervisor/x\":{\"sha256\":\"h\",\"bytes\":1}}}"}`, 0, false},
		{EvTurnEnded, `{"logs":{"supervisor/turn-00003/stdout.log":{"sha256":"h","bytes":1}},"turn":3}`, 1, true},
		{EvReviewResolved, `{"claim":"root","logs":{"supervisor/review-r-1/stdout.log":{"sha256":"h","bytes":1}}}`, 1, false},
	}
	for _, tt := range tests {
		r, ok := loggedEvent(store.Event{Seq: 7, Type: string(tt.typ), Payload: []byte(tt.payload)})
		if ok != (tt.want > 0) || len(r.files) != tt.want || r.turn != tt.turn {
			t.Errorf("%s %s: got %+v %v, want %d file(s), turn %v", tt.typ, tt.payload, r, ok, tt.want, tt.turn)
		}
	}
}

// TestRecordedLogOutsideTheSupervisorFolder: a recorded path that leaves
// the supervisor folder is a finding, never opened.
func TestRecordedLogOutsideTheSupervisorFolder(t *testing.T) {
	c := Campaign{Dir: t.TempDir()}
	for _, rel := range []string{"../outside.txt", "/etc/passwd", "simjecture.db", "supervisor/../../x"} {
		f := recordedLogs{seq: 4, files: TurnLogs{rel: {}}}.check(c)
		if len(f) != 1 || !strings.Contains(f[0], "outside the supervisor folder") {
			t.Errorf("%q: %v", rel, f)
		}
	}
}

// TestHashTurnFolderBounded: the folder's own files come first, then at
// most maxTurnFiles in all; symbolic links are not followed.
func TestHashTurnFolderBounded(t *testing.T) {
	c := Campaign{Dir: t.TempDir()}
	dir := filepath.Join(c.Supervisor(), "turn-00001")
	deep := filepath.Join(dir, "a-state")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range maxTurnFiles + 10 {
		if err := os.WriteFile(filepath.Join(deep, fmt.Sprintf("f%04d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "stdout.log"), []byte("out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "link.log")); err != nil {
		t.Fatal(err)
	}
	logs, problems := hashTurnFolder(c, dir)
	if len(logs) != maxTurnFiles || len(problems) != 1 {
		t.Errorf("%d files hashed, problems %v: want %d and one problem saying so", len(logs), problems, maxTurnFiles)
	}
	if got := logs["supervisor/turn-00001/stdout.log"]; got.Bytes != 4 {
		t.Errorf("stdout.log: %+v, want it hashed first", got)
	}
	if _, ok := logs["supervisor/turn-00001/link.log"]; ok {
		t.Error("a symbolic link was hashed")
	}
	if logs, problems := hashTurnFolder(c, filepath.Join(c.Supervisor(), "turn-00009")); logs != nil || problems != nil {
		t.Errorf("a missing folder: %v %v, want nothing", logs, problems)
	}
}

// TestVerifyFindsChangedScienceReviewLogs: in a structured study, the
// contract reviews' (contract_reviewed) and the judge's (adjudicated)
// verdicts are hashed too; editing each is named.
func TestVerifyFindsChangedScienceReviewLogs(t *testing.T) {
	c, s, sci := scienceStudy(t, "structured")
	if final, _ := runSupervisor(t, c, &loggingAgent{Agent: sci}, Options{}); final != StatusCompleted {
		t.Fatalf("final %s", final)
	}
	if f := verifyFindings(t, c, s); len(f) != 0 {
		t.Fatalf("verify of the untouched study: %v", f)
	}
	verdicts := map[string]bool{} // stage → an attempt of it was edited
	paths, err := filepath.Glob(filepath.Join(c.Supervisor(), "*-review-*", "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		rel, _ := filepath.Rel(c.Dir, path)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(orig), "sufficient", "insufficient")+"x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want := filepath.ToSlash(rel) + " changed since its review attempt ended"
		if f := verifyFindings(t, c, s); len(f) != 1 || f[0] != want {
			t.Errorf("verify after editing %s: %q, want exactly %q", rel, f, want)
		}
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		stage, _, _ := strings.Cut(filepath.Base(filepath.Dir(path)), "-")
		verdicts[stage] = true
	}
	if !verdicts[string(StageContract)] || !verdicts[string(StageSupport)] {
		t.Errorf("edited the verdicts of stages %v, want both contract and support", verdicts)
	}
}

// TestNewsLeaveOutTheLogs: the worker's news line of a review outcome is
// what it was before the logs were recorded, rationale included.
func TestNewsLeaveOutTheLogs(t *testing.T) {
	next := "rerun at n=1e6"
	p := ReviewResolvedPayload{Claim: "root", Decision: "approved", Disposition: "falsified", NextTest: &next,
		Rationale: strings.Repeat("the artifacts show it ", 8), Review: "rev_1"}
	plain, _ := json.Marshal(p)
	p.Logs = TurnLogs{}
	for i := range 5 {
		p.Logs[fmt.Sprintf("supervisor/review-rev_1-1/file-%d.log", i)] = sandbox.Artifact{SHA256: strings.Repeat("ab", 32), Bytes: 9}
	}
	logged, _ := json.Marshal(p)
	var with, without strings.Builder
	writeChanges(&with, []store.Event{{Type: string(EvReviewResolved), Payload: logged}})
	writeChanges(&without, []store.Event{{Type: string(EvReviewResolved), Payload: plain}})
	if with.String() != without.String() || !strings.Contains(with.String(), "rev_1") {
		t.Errorf("news with logs:\n%s\nwant as without:\n%s", with.String(), without.String())
	}
}
