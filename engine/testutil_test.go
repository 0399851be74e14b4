package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// fakeProbe reports the requested backend (bubblewrap for auto) as available.
func fakeProbe(_ context.Context, b sandbox.Backend) sandbox.Report {
	if b == sandbox.Auto {
		return sandbox.Report{Backend: sandbox.Bubblewrap, Available: true, Selected: sandbox.Bubblewrap, Reason: "test"}
	}
	return sandbox.Report{Backend: b, Available: true, Reason: "test"}
}

// newTestStudy creates a study with a command agent in a temp folder.
func newTestStudy(t testing.TB, edit func(*Request)) (Campaign, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	hyp := filepath.Join(dir, "h.txt")
	ins := filepath.Join(dir, "i.txt")
	agent := filepath.Join(dir, "agent.sh")
	for p, body := range map[string]string{hyp: "sum of k^3 is a square", ins: "check it", agent: "#!/bin/sh\nexit 0\n"} {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	req := Request{HypothesisFile: hyp, InstructionsFile: ins, Mode: "minimal", AgentBackend: "command",
		Executable: agent, ExecutionBackend: "bubblewrap", CompletionPolicy: "repair", WallSeconds: 600, TurnSeconds: 60}
	if edit != nil {
		edit(&req)
	}
	c := Campaign{Dir: filepath.Join(dir, "campaign")}
	if _, err := CreateStudy(context.Background(), c, req, fakeProbe); err != nil {
		t.Fatal(err)
	}
	s, err := c.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return c, s
}

func writeResearch(t testing.TB, c Campaign, rel, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(c.Research(), rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}
