package engine

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// continuationRequest writes the operator files and returns a minimal
// command-agent request for a study in dir.
func continuationRequest(t *testing.T, dir string) Request {
	t.Helper()
	writeTestFile(t, filepath.Join(dir, "h.txt"), []byte("the parent's question"))
	writeTestFile(t, filepath.Join(dir, "i.txt"), []byte("go on"))
	writeTestFile(t, filepath.Join(dir, "agent.sh"), []byte("#!/bin/sh\nexit 0\n"))
	must(t, os.Chmod(filepath.Join(dir, "agent.sh"), 0o755))
	return Request{HypothesisFile: filepath.Join(dir, "h.txt"), InstructionsFile: filepath.Join(dir, "i.txt"), Mode: "minimal",
		AgentBackend: "command", Executable: filepath.Join(dir, "agent.sh"), ExecutionBackend: "bubblewrap",
		CompletionPolicy: "repair", WallSeconds: 600, TurnSeconds: 60}
}

// hashTree is the sha256 of every file under dir, by path.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256Hex(b)
		return err
	})
	must(t, err)
	return out
}

func TestContinuationCreatesChildAndLeavesParent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	req := continuationRequest(t, dir)
	parent := Campaign{Dir: filepath.Join(dir, "parent")}
	pk, err := CreateStudy(ctx, parent, req, fakeProbe)
	must(t, err)
	writeTestFile(t, filepath.Join(parent.Research(), "a.py"), []byte("print(1)\n"))
	writeTestFile(t, filepath.Join(parent.Research(), "d/b.csv"), []byte("1,2\n"))
	before := hashTree(t, parent.Dir)

	child := Campaign{Dir: filepath.Join(dir, "child")}
	creq := req
	creq.HypothesisFile, creq.ContinueFrom, creq.InheritFiles = "", parent.Dir, []string{"a.py", "d/b.csv"}
	k, err := CreateStudy(ctx, child, creq, fakeProbe)
	must(t, err)
	if after := hashTree(t, parent.Dir); !sameTree(before, after) {
		t.Errorf("the parent changed:\nbefore %v\nafter  %v", before, after)
	}
	cont := k.Continuation
	if cont == nil || cont.ParentStudyID != pk.StudyID || len(cont.Files) != 2 || k.HypothesisSHA256 != pk.HypothesisSHA256 {
		t.Fatalf("child contract %+v: want the parent %s, two files and the parent's hypothesis", cont, pk.StudyID)
	}
	for _, rel := range []string{"operator/continuation/files/d/b.csv", "research/inherited/d/b.csv", "operator/continuation/summary.md"} {
		if _, err := os.Stat(filepath.Join(child.Dir, rel)); err != nil {
			t.Errorf("child lacks %s: %v", rel, err)
		}
	}
	v, err := OpenView(ctx, child)
	must(t, err)
	snap, err := v.Snapshot(ctx)
	_ = v.Close()
	must(t, err)
	if len(snap.Claims) != 1 || snap.Claims[0].Status != ClaimOpen {
		t.Errorf("child claims %+v, want the root alone, open", snap.Claims)
	}
	if p := ContinuationPointer(k); !strings.Contains(p, pk.StudyID) || !strings.Contains(p, "operator/continuation/") {
		t.Errorf("prompt pointer %q names neither the parent nor the history", p)
	}
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestContinuationSnapshotVerifiedOnOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	req := continuationRequest(t, dir)
	parent := Campaign{Dir: filepath.Join(dir, "parent")}
	_, err := CreateStudy(ctx, parent, req, fakeProbe)
	must(t, err)
	writeTestFile(t, filepath.Join(parent.Research(), "a.py"), []byte("print(1)\n"))
	tampers := []struct {
		name, rel string
		tamper    func(path string) error
	}{
		{"an edited file", "files/a.py", func(p string) error { return os.WriteFile(p, []byte("print(2)\n"), 0o644) }},
		{"a removed summary", "summary.json", os.Remove},
		{"a symlink", "files/a.py", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(parent.Research(), "a.py"), p)
		}},
	}
	for i, tt := range tampers {
		t.Run(tt.name, func(t *testing.T) {
			child := Campaign{Dir: filepath.Join(dir, "child", string(rune('a'+i)))}
			creq := req
			creq.ContinueFrom, creq.InheritFiles = parent.Dir, []string{"a.py"}
			_, err := CreateStudy(ctx, child, creq, fakeProbe)
			must(t, err)
			path := filepath.Join(child.Dir, ContinuationDir, tt.rel)
			must(t, os.Chmod(filepath.Dir(path), 0o755))
			must(t, os.Chmod(path, 0o644))
			must(t, tt.tamper(path))
			_, err = OpenView(ctx, child)
			if err == nil || !strings.Contains(err.Error(), ContinuationDir+"/"+tt.rel) {
				t.Fatalf("OpenView of a child with %s: %v, want a refusal naming %s", tt.name, err, tt.rel)
			}
			if _, err := OpenStudy(ctx, child, Options{}); err == nil {
				t.Errorf("OpenStudy opened a child with %s", tt.name)
			}
		})
	}
}

func TestContinuationRefusesBadParent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	req := continuationRequest(t, dir)
	parent := Campaign{Dir: filepath.Join(dir, "parent")}
	_, err := CreateStudy(ctx, parent, req, fakeProbe)
	must(t, err)
	tests := []struct{ name, child, from, want string }{
		{"no study there", "c1", filepath.Join(dir, "nothing"), "holds no simjecture study"},
		{"inside the parent", "parent/research/c2", parent.Dir, "inside its parent"},
		{"inherit without a parent", "c3", "", "give --continue-from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			child := Campaign{Dir: filepath.Join(dir, tt.child)}
			r := req
			r.ContinueFrom, r.InheritFiles = tt.from, []string{"x.py"}
			_, err := CreateStudy(ctx, child, r, fakeProbe)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CreateStudy: %v, want %q", err, tt.want)
			}
			if _, err := os.Stat(child.Dir); err == nil {
				t.Errorf("a refused continuation wrote %s", child.Dir)
			}
		})
	}
}
