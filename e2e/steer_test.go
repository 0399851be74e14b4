package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type steering struct {
	ID          string  `json:"id"`
	Text        string  `json:"text"`
	RequestKey  *string `json:"request_key"`
	CreatedAt   string  `json:"created_at"`
	DeliveredAt *string `json:"delivered_at"`
	Existing    bool    `json:"existing"`
}

func steeringOf(t *testing.T, dir string) []steering {
	t.Helper()
	r := sj(t, "", "status", "--campaign", dir, "--json")
	var snap struct {
		Steering []steering `json:"steering"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &snap) != nil || snap.Steering == nil {
		t.Fatalf("status --json has no steering list: %s", r)
	}
	return snap.Steering
}

func steer(t *testing.T, dir, text, key string) (steering, result) {
	t.Helper()
	r := sj(t, "", "steer", "--campaign", dir, "--message", text, "--request-key", key, "--json")
	var s steering
	if r.code == 0 && json.Unmarshal([]byte(r.stdout), &s) != nil {
		t.Fatalf("steer --json prints no record: %s", r)
	}
	return s, r
}

// refusedSteer wants exit 2 with one line on stderr and nothing stored.
func refusedSteer(t *testing.T, dir, text, key, why string) {
	t.Helper()
	before := steeringOf(t, dir)
	_, r := steer(t, dir, text, key)
	if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, why) || r.stdout != "" {
		t.Errorf("steer (%s): want exit 2 and one line saying %q, got %s", key, why, r)
	}
	if after := steeringOf(t, dir); len(after) != len(before) {
		t.Errorf("a refused steer stored guidance: %d messages before, %d after", len(before), len(after))
	}
}

// TestSteerReachesPromptAndPacket queues guidance into a paused study,
// resumes it and finds the guidance in the next worker prompt (as the
// agent read it on stdin) and in the review packet; the request key makes
// the call idempotent, and the ended study refuses more.
func TestSteerReachesPromptAndPacket(t *testing.T) {
	t.Parallel()
	c := pausedInTurn1(t)
	const text = "Prefer exact integer arithmetic; report max_abs_diff."
	first, r := steer(t, c.dir, text, "k1")
	if r.code != 0 || first.Existing || first.ID == "" || first.DeliveredAt != nil {
		t.Fatalf("steer: want a new undelivered record, got %+v, %s", first, r)
	}
	again, r := steer(t, c.dir, text, "k1")
	if r.code != 0 || !again.Existing || again.ID != first.ID {
		t.Fatalf("steer with the same key and text: want the stored %s, got %+v, %s", first.ID, again, r)
	}
	refusedSteer(t, c.dir, "another text", "k1", "different guidance")
	if r := sj(t, "", "resume", "--campaign", c.dir, "--batch"); r.code != 0 {
		t.Fatalf("resume: want exit 0, got %s%s", r, status(t, c.dir).notes())
	}
	checkPromptCarries(t, c.dir, first.ID, text)
	checkPacketCarries(t, c.dir, first.ID)
	checkReceiptsList(t, c.dir, first.ID)
	got := steeringOf(t, c.dir)
	if len(got) != 1 || got[0].ID != first.ID || got[0].DeliveredAt == nil || got[0].RequestKey == nil || *got[0].RequestKey != "k1" {
		t.Errorf("status --json steering = %+v; want the one message, delivered, under k1", got)
	}
	refusedSteer(t, c.dir, "one more idea", "k2", "--continue-from")
}

// pausedInTurn1 is a cubes study that saves its prompts and whose agent
// paused it in turn 1, before any work.
func pausedInTurn1(t *testing.T) campaign {
	t.Helper()
	c := newCampaign(t, "cubes", "e2e-n: 40", "e2e-challenge-n: 400", "e2e-save-prompt: yes", "e2e-pause-turns: 1")
	if r := sj(t, "", c.args(120, 30)...); r.code != 0 || status(t, c.dir).Status != "paused" {
		t.Fatalf("a study whose agent pauses it in turn 1: %s", r)
	}
	return c
}

func checkPromptCarries(t *testing.T, dir, id, text string) {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(dir, "research", "prompt-1.txt"))
	if err != nil || strings.Contains(string(before), id) {
		t.Errorf("turn 1's prompt (%v) should exist and carry no guidance queued after it", err)
	}
	after, err := os.ReadFile(filepath.Join(dir, "research", "prompt-2.txt"))
	for _, want := range []string{"operator guidance, advisory", id, text} {
		if err != nil || !strings.Contains(string(after), want) {
			t.Errorf("turn 2's prompt (%v) lacks %q:\n%s", err, want, after)
		}
	}
}

func checkPacketCarries(t *testing.T, dir, id string) {
	t.Helper()
	packets, _ := filepath.Glob(filepath.Join(dir, "supervisor", "review-*", "*", "packet.json"))
	if len(packets) == 0 {
		t.Fatalf("the reviewer saved no packet.json under supervisor/review-*/")
	}
	b, err := os.ReadFile(packets[0])
	var p struct {
		Steering []steering `json:"steering"`
	}
	if err != nil || json.Unmarshal(b, &p) != nil || len(p.Steering) != 1 || p.Steering[0].ID != id {
		t.Errorf("review packet %s steering = %+v (%v); want %s", packets[0], p.Steering, err, id)
	}
}

// checkReceiptsList wants every receipt (all submitted after the guidance
// was queued) to list it, in status --json and in report.json.
func checkReceiptsList(t *testing.T, dir, id string) {
	t.Helper()
	var rep snapshot
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report.json unreadable: %v", err)
	}
	for where, snap := range map[string]snapshot{"status --json": status(t, dir), "report.json": rep} {
		if len(snap.Experiments) == 0 {
			t.Errorf("%s: no experiments", where)
		}
		for _, r := range snap.Experiments {
			if len(r.Guidance) != 1 || r.Guidance[0] != id {
				t.Errorf("%s: receipt %s guidance = %v; want [%s]", where, r.ID, r.Guidance, id)
			}
		}
	}
}
