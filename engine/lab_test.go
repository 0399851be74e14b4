package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLabRunRejectsBadInput(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	writeResearch(t, c, "data/in.txt", "x", 0o644)
	outside := filepath.Join(filepath.Dir(c.Dir), "secret.txt")
	if err := os.WriteFile(outside, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(c.Research(), "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(c.Dir), filepath.Join(c.Research(), "up")); err != nil {
		t.Fatal(err)
	}
	writeResearch(t, c, "plain.bin", "x", 0o644)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	cases := []struct {
		name, call, args, want string
	}{
		{"dotdot source", "run", `{"source":"../secret.txt","outputs":["o"]}`, "leaves its folder"},
		{"absolute source", "run", `{"source":"` + outside + `","outputs":["o"]}`, "is absolute"},
		{"symlink source", "run", `{"source":"link.py","outputs":["o"]}`, "symlink"},
		{"symlinked folder", "run", `{"source":"up/secret.txt","outputs":["o"]}`, "symlink"},
		{"input outside", "run", `{"source":"sim.py","inputs":["../secret.txt"],"outputs":["o"]}`, "leaves its folder"},
		{"missing source", "run", `{"source":"nope.py","outputs":["o"]}`, "does not exist"},
		{"not executable", "run", `{"source":"plain.bin","outputs":["o"]}`, "neither .py, .sh nor executable"},
		{"output dotdot", "run", `{"source":"sim.py","outputs":["../o"]}`, "leaves its folder"},
		{"output absolute", "run", `{"source":"sim.py","outputs":["/etc/o"]}`, "is absolute"},
		{"no outputs", "run", `{"source":"sim.py","outputs":[]}`, "at least one declared output"},
		{"output is input", "run", `{"source":"sim.py","outputs":["sim.py"]}`, "also a sealed"},
		{"NUL argument", "run", `{"source":"sim.py","args":["a\u0000b"],"outputs":["o"]}`, "NUL"},
		{"unknown key", "run", `{"source":"sim.py","outputs":["o"],"sauce":1}`, "unknown argument sauce"},
		{"wrong type", "run", `{"source":"sim.py","outputs":"o"}`, "must be an array"},
		{"bad stage", "run", `{"source":"sim.py","outputs":["o"],"stage":"final"}`, "one of exploration, evidence"},
		{"too many cpus", "run", `{"source":"sim.py","outputs":["o"],"resources":{"cpus":64}}`, "resources.cpus"},
		{"zero timeout", "run", `{"source":"sim.py","outputs":["o"],"timeout":0}`, "timeout"},
		{"malformed JSON", "run", `{"source":`, "stdin is not a JSON object: the JSON ends before its value is complete"},
		{"two values", "note", `{"statement":"a"} {}`, "more than one value"},
		{"unknown call", "approve", `{}`, "unknown lab call"},
		{"review unknown claim", "review", `{"claim":"c9","disposition":"falsified","conclusion":"x","experiments":["exp_x"]}`, "no claim c9"},
		{"supported without challenge", "review", `{"disposition":"supported","conclusion":"x","experiments":["exp_x"]}`, "needs challenge"},
		{"commit unknown parent", "commit", `{"statement":"s","parent":"claim_nope"}`, "no claim claim_nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lab.Call(context.Background(), tc.call, []byte(tc.args))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, got %v", tc.want, err)
			}
			if !errors.Is(err, ErrLab) {
				t.Fatalf("error is not ErrLab: %v", err)
			}
		})
	}
	snap, err := LoadSnapshot(context.Background(), c, s)
	if err != nil || len(snap.Experiments) != 0 {
		t.Fatalf("refused calls recorded experiments: %d %v", len(snap.Experiments), err)
	}
}

func TestLabRunIsIdempotentAndSealed(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	ctx := context.Background()
	run := func(args string) Receipt {
		t.Helper()
		got, err := lab.Call(ctx, "run", []byte(args))
		if err != nil {
			t.Fatal(err)
		}
		return got.(Receipt)
	}
	a := run(`{"source":"sim.py","args":["1"],"outputs":["o.json"]}`)
	b := run(`{"source":"sim.py","args":["1"],"outputs":["o.json"]}`)
	if a.ID != b.ID || !strings.HasPrefix(a.ID, "exp_") || len(a.ID) != 28 {
		t.Fatalf("same request gave %s and %s", a.ID, b.ID)
	}
	for name, args := range map[string]string{
		"argument": `{"source":"sim.py","args":["2"],"outputs":["o.json"]}`,
		"key":      `{"source":"sim.py","args":["1"],"outputs":["o.json"],"key":"r2"}`,
		"stage":    `{"source":"sim.py","args":["1"],"outputs":["o.json"],"stage":"exploration"}`,
	} {
		if run(args).ID == a.ID {
			t.Errorf("changed %s kept id %s", name, a.ID)
		}
	}
	writeResearch(t, c, "sim.py", "print(2)\n", 0o644)
	if run(`{"source":"sim.py","args":["1"],"outputs":["o.json"]}`).ID == a.ID {
		t.Error("changed source kept the id")
	}
	blob := c.SealedBlob(a.Inputs["sim.py"])
	if got, _, err := hashFile(blob); err != nil || got != a.Inputs["sim.py"] {
		t.Fatalf("sealed copy %s: %v %s", blob, err, got)
	}
}

func TestCompleted(t *testing.T) {
	root := "root"
	mid := "c1"
	claim := func(id, status string, parent *string) Claim { return Claim{ID: id, Status: status, Parent: parent} }
	cases := []struct {
		name   string
		claims []Claim
		policy string
		want   bool
	}{
		{"open root", []Claim{claim("root", "open", nil)}, "repair", false},
		{"root supported", []Claim{claim("root", "supported", nil)}, "repair", true},
		{"root falsified, repair policy", []Claim{claim("root", "falsified", nil)}, "repair", false},
		{"root falsified, answer policy", []Claim{claim("root", "falsified", nil)}, "answer", true},
		{"repair supported", []Claim{claim("root", "falsified", nil), claim("c1", "supported", &root)}, "repair", true},
		{"repair open", []Claim{claim("root", "falsified", nil), claim("c1", "open", &root)}, "repair", false},
		{"grandchild supported, middle open", []Claim{claim("root", "falsified", nil), claim("c1", "open", &root), claim("c2", "supported", &mid)}, "repair", false},
		{"grandchild supported, chain falsified", []Claim{claim("root", "falsified", nil), claim("c1", "falsified", &root), claim("c2", "supported", &mid)}, "repair", true},
		{"unresolved root", []Claim{claim("root", "unresolved", nil)}, "answer", false},
	}
	for _, tc := range cases {
		if got := Completed(tc.claims, tc.policy); got != tc.want {
			t.Errorf("%s: got %v want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	r := Review{Claim: "root", Disposition: "falsified"}
	open := Claim{ID: "root", Status: ClaimOpen}
	good := `{"claim_id":"root","decision":"approved","disposition":"falsified","rationale":"measured 0.58 > 0.01 threshold","evidence_gaps":[],"next_test":null}`
	cases := []struct {
		name, line string
		claim      Claim
		want       string // "" = valid
	}{
		{"valid", good, open, ""},
		{"fenced", "```json" + good + "```", open, ""},
		{"needs revision", `{"claim_id":"root","decision":"needs_revision","disposition":"falsified","rationale":"the run was too short to tell","evidence_gaps":["longer run"],"next_test":"run 100 orbits"}`, open, ""},
		{"not json", "I approve", open, "not the expected JSON"},
		{"extra field", strings.Replace(good, `"next_test":null`, `"next_test":null,"approve":true`, 1), open, "not the expected JSON"},
		{"wrong claim", strings.Replace(good, `"claim_id":"root"`, `"claim_id":"c1"`, 1), open, "is for claim"},
		{"bad decision", strings.Replace(good, `"approved"`, `"yes"`, 1), open, "decision"},
		{"short rationale", strings.Replace(good, "measured 0.58 > 0.01 threshold", "ok", 1), open, "shorter than 16"},
		{"approval with gaps", strings.Replace(good, `"evidence_gaps":[]`, `"evidence_gaps":["x"]`, 1), open, "cannot keep evidence gaps"},
		{"approval unresolved", strings.Replace(good, `"disposition":"falsified"`, `"disposition":"unresolved"`, 1), open, "unresolved"},
		{"approval contradicts request", strings.Replace(good, `"disposition":"falsified"`, `"disposition":"supported"`, 1), open, "was requested"},
		{"revision without gaps", strings.Replace(good, `"approved"`, `"needs_revision"`, 1), open, "must name evidence gaps"},
		{"contradicts accepted status", good, Claim{ID: "root", Status: "supported"}, "contradicts"},
	}
	for _, tc := range cases {
		_, err := ParseVerdict(tc.line, r, tc.claim)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: want %q, got %v", tc.name, tc.want, err)
		}
	}
}

func TestBackoffAndIdlePause(t *testing.T) {
	want := []int{2, 4, 8, 16, 32, 60, 60, 60}
	for i, w := range want {
		if got := Backoff(i + 1).Seconds(); int(got) != w {
			t.Errorf("Backoff(%d) = %v, want %d", i+1, got, w)
		}
	}
	if IdlePause(1).Seconds() != 1 || IdlePause(3).Seconds() != 4 || IdlePause(20).Seconds() != 60 {
		t.Errorf("idle pauses: %v %v %v", IdlePause(1), IdlePause(3), IdlePause(20))
	}
}

func TestCheckFrozen(t *testing.T) {
	k := Contract{Mode: "minimal", AgentBackend: "command", Model: "m", ExecutionBackend: "bubblewrap", CompletionPolicy: "repair", WallSeconds: 60}
	cases := []struct {
		name string
		req  Request
		want string
	}{
		{"nothing given", Request{}, ""},
		{"same values", Request{Mode: "minimal", ExecutionBackend: "bubblewrap"}, ""},
		{"auto", Request{ExecutionBackend: "auto"}, ""},
		{"backend", Request{ExecutionBackend: "proot-cooperative"}, "execution backend is immutable within a study: recorded bubblewrap, requested proot-cooperative"},
		{"policy", Request{CompletionPolicy: "answer"}, "completion policy is immutable"},
		{"wall", Request{WallSeconds: 61}, "wall seconds is immutable"},
		{"model", Request{Model: "other"}, "model is immutable"},
	}
	for _, tc := range cases {
		err := CheckFrozen(k, tc.req)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: want %q got %v", tc.name, tc.want, err)
		}
	}
}
