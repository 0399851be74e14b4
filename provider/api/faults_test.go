package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/provider"
)

func TestFaultClassification(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		step step
		want string // category; "" = no failure
	}{
		{"429 rate limit", status(429, `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`), provider.CategoryTransient},
		{"500", status(500, `{"error":{"message":"internal error"}}`), provider.CategoryTransient},
		{"503 overloaded", status(503, `Service Unavailable: overloaded`), provider.CategoryTransient},
		{"408", status(408, ``), provider.CategoryTransient},
		{"stream cut", cut, provider.CategoryTransient},
		{"eof before done", eofEarly, provider.CategoryTransient},
		{"401", status(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`","code":"invalid_api_key"}}`), provider.CategoryAuthentication},
		{"402", status(402, `{"error":{"message":"Insufficient Balance"}}`), provider.CategoryQuota},
		{"403", status(403, `{"error":{"message":"model not found","code":"model_not_found"}}`), provider.CategoryPermission},
		{"404 model", status(404, `{"error":{"message":"The model m does not exist"}}`), provider.CategoryPermission},
		{"429 insufficient_quota", status(429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}`), provider.CategoryQuota},
		{"400 falls back to the text", status(400, `{"error":{"message":"invalid api key"}}`), provider.CategoryAuthentication},
		{"422 plain", status(422, `{"error":{"message":"bad field"}}`), provider.CategoryTransient},
		{"error event quota", errorEvent("Error code: 402 - Insufficient Balance"), provider.CategoryQuota},
		{"error event disconnect", errorEvent("stream disconnected"), provider.CategoryTransient},
		{"prose quoting 401", answer("HTTP 401 unauthorized and quota exhausted are examples only.", true), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := newMock(t, c.step)
			var l toolLog
			turn := workerTurn(t, 10*time.Second, &l)
			out, err := agentFor(m).RunTurn(context.Background(), turn)
			if err != nil {
				t.Fatalf("RunTurn error (harness): %v", err)
			}
			got := ""
			if out.Failure != nil {
				got = out.Failure.Category
			}
			if got != c.want {
				t.Fatalf("category = %q, want %q (outcome %+v)", got, c.want, out)
			}
			if c.want != "" && (out.ExitCode != 1 || out.Failure.Message == "") {
				t.Errorf("failed turn: exit %d, message %q", out.ExitCode, out.Failure.Message)
			}
			checkNoKey(t, turn.LogDir, out)
		})
	}
}

// checkNoKey wants the key in no log file and no outcome field, and the
// 401 body's quotation of it redacted.
func checkNoKey(t *testing.T, logDir string, out provider.Outcome) {
	t.Helper()
	text := out.StdoutTail + out.StderrTail + out.LastLine
	if out.Failure != nil {
		text += out.Failure.Message
	}
	if strings.Contains(text, testKey) {
		t.Errorf("the outcome quotes the key: %q", text)
	}
	if out.Failure != nil && out.Failure.Category == provider.CategoryAuthentication && strings.Contains(out.Failure.Message, "Incorrect") &&
		!strings.Contains(out.Failure.Message, Redacted) {
		t.Errorf("the 401 message does not show %s: %q", Redacted, out.Failure.Message)
	}
	_ = filepath.WalkDir(logDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), testKey) {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
}

func TestHungResponseIsBoundedByTheAllowance(t *testing.T) {
	t.Parallel()
	m := newMock(t, hang)
	var l toolLog
	turn := workerTurn(t, 300*time.Millisecond, &l)
	start := time.Now()
	out, err := agentFor(m).RunTurn(context.Background(), turn)
	took := time.Since(start)
	if err != nil || out.Failure != nil || !out.TimedOut || out.ExitCode != 124 {
		t.Fatalf("hung turn = %+v, %v; want TimedOut (a checkpoint), no failure", out, err)
	}
	if took > 2*time.Second {
		t.Errorf("the hung turn took %v with a 300 ms allowance", took)
	}
}

func TestStoppedTurnReturnsPromptly(t *testing.T) {
	t.Parallel()
	m := newMock(t, hang)
	var l toolLog
	turn := workerTurn(t, time.Minute, &l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan provider.Outcome, 1)
	go func() {
		out, _ := agentFor(m).RunTurn(ctx, turn)
		done <- out
	}()
	waitRequests(t, m, 1)
	cancel()
	select {
	case out := <-done:
		if out.Failure != nil || out.TimedOut {
			t.Errorf("a stopped turn = %+v, want neither failure nor timeout", out)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("RunTurn did not return within 2 s of its context ending")
	}
}

func waitRequests(t *testing.T, m *mockServer, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(m.requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the mock saw %d requests, want %d", len(m.requests()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNetworkErrorIsTransient(t *testing.T) {
	t.Parallel()
	m := newMock(t, hang)
	url := m.srv.URL
	m.srv.Close()
	a := New(Config{BaseURL: url + "/v1", APIKey: testKey})
	var l toolLog
	out, err := a.RunTurn(context.Background(), workerTurn(t, 5*time.Second, &l))
	if err != nil || out.Failure == nil || out.Failure.Category != provider.CategoryTransient {
		t.Fatalf("connection refused = %+v, %v; want a transient failure", out, err)
	}
}

func TestStepCapEndsTheTurn(t *testing.T) {
	t.Parallel()
	m := newMock(t, answer("", true, call{"c", "run", []string{`{}`}}))
	var l toolLog
	a := agentFor(m)
	a.MaxSteps = 3
	out, err := a.RunTurn(context.Background(), workerTurn(t, 10*time.Second, &l))
	if err != nil || out.Failure != nil || out.TimedOut {
		t.Fatalf("RunTurn = %+v, %v", out, err)
	}
	if n := len(m.requests()); n != 3 {
		t.Errorf("%d requests, want the cap of 3", n)
	}
}
