package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// apiSnap is the part of `status --json` the api and fault tests read.
type apiSnap struct {
	Status   string    `json:"status"`
	Deadline time.Time `json:"deadline"`
	Turn     int       `json:"turn"`
	Provider struct {
		RetryCount          int        `json:"retry_count"`
		ConsecutiveFailures int        `json:"consecutive_failures"`
		WaitSeconds         float64    `json:"wait_seconds"`
		FailedTurnSeconds   float64    `json:"failed_turn_seconds"`
		NextRetryAt         *time.Time `json:"next_retry_at"`
		ErrorCategory       *string    `json:"error_category"`
		Attention           *string    `json:"attention"`
	} `json:"provider"`
	Usage struct {
		InputTokens  *int64 `json:"input_tokens"`
		OutputTokens *int64 `json:"output_tokens"`
	} `json:"usage"`
	Experiments []struct{ ID, Status string } `json:"experiments"`
	Reviews     []struct{ ID, Status string } `json:"reviews"`
	Claims      []struct{ ID, Status string } `json:"claims"`
	LastError   string                        `json:"last_error"`
	raw         string
}

func (s apiSnap) experimentIDs() string {
	ids := []string{}
	for _, e := range s.Experiments {
		ids = append(ids, e.ID)
	}
	return strings.Join(ids, ",")
}

// apiStatus reads the snapshot of a campaign; ok is false while it cannot.
func apiStatus(t *testing.T, dir string) (apiSnap, bool) {
	t.Helper()
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var s apiSnap
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil {
		return s, false
	}
	s.raw = r.stdout
	return s, true
}

func mustAPIStatus(t *testing.T, dir string) apiSnap {
	t.Helper()
	s, ok := apiStatus(t, dir)
	if !ok {
		t.Fatalf("status --json of %s failed", dir)
	}
	return s
}

// apiEvent is one line of `watch --jsonl`.
type apiEvent struct {
	Seq     int64          `json:"seq"`
	Time    time.Time      `json:"time"`
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload"`
}

// apiEvents reads the whole event log of a stopped study.
func apiEvents(t *testing.T, dir string) ([]apiEvent, string) {
	t.Helper()
	r := sj(t, "", "watch", "--campaign", dir, "--jsonl")
	var evs []apiEvent
	for _, l := range lines(r.stdout) {
		var ev apiEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("watch --jsonl printed a non-JSON line %q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	return evs, r.stdout
}

func eventsOf(evs []apiEvent, typ string) []apiEvent {
	var out []apiEvent
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// apiStudy is a study of the api backend against the mock.
type apiStudy struct {
	dir, hyp, ins, conn, key string
	mock                     *llmMock
}

func newAPIStudy(t *testing.T, faults map[int]string) apiStudy {
	t.Helper()
	tmp := t.TempDir()
	s := apiStudy{dir: filepath.Join(tmp, "study"), hyp: filepath.Join(tmp, "hypothesis.txt"),
		ins: filepath.Join(tmp, "instructions.txt"), key: "sk-e2e-" + randomHex(t) + randomHex(t)}
	writeFile(t, s.hyp, "For every n >= 1, sum_{k=1..n} k^3 = (n(n+1)/2)^2.\n")
	writeFile(t, s.ins, "Check the identity numerically and ask for review.\n")
	s.mock = newLLMMock(t, s.key, faults)
	s.conn = s.mock.connectionFile(t)
	return s
}

func (s apiStudy) args(wall, turn int) []string {
	return []string{"study", "--campaign", s.dir, "--hypothesis-file", s.hyp, "--instructions-file", s.ins,
		"--backend", "api", "--model", "m", "--provider-config", s.conn, "--execution-backend", "bubblewrap",
		"--wall-seconds", fmt.Sprint(wall), "--turn-seconds", fmt.Sprint(turn), "--batch"}
}

// TestAPIBackendCompletesStudy: the api backend, against the mock, queues
// an experiment through the run tool, asks for review, and the tool-free
// reviewer's verdict completes the study. Token usage is the sum of the
// streamed usage chunks, and the key is nowhere in the campaign folder.
func TestAPIBackendCompletesStudy(t *testing.T) {
	t.Parallel()
	s := newAPIStudy(t, nil)
	r := sj(t, "", s.args(120, 30)...)
	if r.code != 0 {
		t.Fatalf("study --backend api: want exit 0, got %s", r)
	}
	snap := mustAPIStatus(t, s.dir)
	if snap.Status != "completed" || len(snap.Experiments) != 1 || snap.Experiments[0].Status != "succeeded" {
		t.Fatalf("want completed with one succeeded experiment:\n%s", snap.raw)
	}
	if len(snap.Reviews) != 1 || snap.Reviews[0].Status != "resolved" || snap.Claims[0].Status != "supported" {
		t.Errorf("want root supported by one resolved review:\n%s", snap.raw)
	}
	requests, served, badAuth := s.mock.counts()
	if badAuth != 0 || requests != served || served < 5 {
		t.Errorf("mock saw %d requests, %d served, %d with a wrong bearer token", requests, served, badAuth)
	}
	in, out := snap.Usage.InputTokens, snap.Usage.OutputTokens
	if in == nil || out == nil || *in != int64(100*served) || *out != int64(20*served) {
		t.Errorf("usage = %v/%v, want %d/%d (summed over %d streamed requests)", ptr(in), ptr(out), 100*served, 20*served, served)
	}
	if p := snap.Provider; p.RetryCount != 0 || p.ErrorCategory != nil {
		t.Errorf("the agent's own words quoting 401 / quota exhausted were taken as a failure: %+v", p)
	}
	if v := sj(t, "", "verify", "--campaign", s.dir); v.code != 0 {
		t.Errorf("verify: %s", v)
	}
	evs, evText := apiEvents(t, s.dir)
	checkNoKey(t, s.dir, s.key, r.stdout+r.stderr+snap.raw+evText)
	if len(eventsOf(evs, "usage")) == 0 {
		t.Error("no usage event was recorded")
	}
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkNoKey greps every file under the campaign folder (the store, its
// WAL, reports, turn logs, experiment artifacts) and the given output for
// the key.
func checkNoKey(t *testing.T, dir, key, output string) {
	t.Helper()
	if strings.Contains(output, key) {
		t.Errorf("the key appears in command output or events")
	}
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"simjecture.db", "report.json", "LEDGER.md"} {
		if _, err := os.Stat(filepath.Join(dir, must)); err != nil {
			t.Errorf("searched for the key, but %s is missing: %v", must, err)
		}
	}
	if files < 10 {
		t.Errorf("searched only %d files for the key", files)
	}
}

// TestAPIConnectionFileRefused: a connection file others can read, or a
// plain-http base URL to a remote host, is invalid input: exit 2, one line
// that does not quote the key, nothing written.
func TestAPIConnectionFileRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, want string
		mode             os.FileMode
	}{
		{"world readable", `{"base_url":"http://127.0.0.1:9/v1","api_key":"KEY"}`, "0600", 0o644},
		{"plain http remote", `{"base_url":"http://example.com/v1","api_key":"KEY"}`, "loopback", 0o600},
		{"userinfo", `{"base_url":"https://u:KEY@example.com/v1","api_key":"KEY"}`, "userinfo", 0o600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newAPIStudy(t, nil)
			body := strings.ReplaceAll(c.body, "KEY", s.key)
			if err := os.WriteFile(s.conn, []byte(body), c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(s.conn, c.mode); err != nil {
				t.Fatal(err)
			}
			r := sj(t, "", s.args(60, 30)...)
			if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, s.key) {
				t.Fatalf("want exit 2 and one key-free line naming %q, got %s", c.want, r)
			}
			if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
				t.Errorf("the refused study left %s behind (stat: %v)", s.dir, err)
			}
			if n, _, _ := s.mock.counts(); n != 0 {
				t.Errorf("a refused study sent %d requests", n)
			}
		})
	}
}
