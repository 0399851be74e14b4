package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCheckNamesNamesTheField: a value that names nothing in its table, and
// a scientific mode with a policy other than repair, are FieldErrors of the
// right field, reported before any agent backend probes the host.
func TestCheckNamesNamesTheField(t *testing.T) {
	t.Parallel()
	ok := Request{Mode: "minimal", CompletionPolicy: PolicyRepair, AgentBackend: "codex", ExecutionBackend: "bubblewrap",
		Executable: "no-such-codex-binary", WallSeconds: 60, TurnSeconds: 30}
	edit := func(fn func(*Request)) Request { r := ok; fn(&r); return r }
	tests := []struct {
		name  string
		req   Request
		field Field
		with  Field
	}{
		{"agent backend", edit(func(r *Request) { r.AgentBackend = "weird" }), FieldAgentBackend, ""},
		{"execution backend, codex missing", edit(func(r *Request) { r.ExecutionBackend = "weird" }), FieldExecutionBackend, ""},
		{"mode", edit(func(r *Request) { r.Mode = "weird" }), FieldMode, ""},
		{"completion policy", edit(func(r *Request) { r.CompletionPolicy = "weird" }), FieldCompletionPolicy, ""},
		{"structured answers", edit(func(r *Request) { r.Mode, r.CompletionPolicy = "structured", "answer" }), FieldCompletionPolicy, FieldMode},
		{"frontier answers", edit(func(r *Request) { r.Mode, r.CompletionPolicy = "frontier", "answer" }), FieldCompletionPolicy, FieldMode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.req
			fe, ok := AsFieldError(validateRequest(&r))
			if !ok || fe.Field != tt.field || fe.With != tt.with || fe.Backend != "" {
				t.Fatalf("want a FieldError on %q (with %q), got %v", tt.field, tt.with, fe)
			}
		})
	}
	for _, mode := range ScientificModes {
		r := edit(func(r *Request) { r.Mode, r.AgentBackend, r.Executable = mode, "scripted", "" })
		if err := validateRequest(&r); err != nil {
			t.Errorf("%s with policy repair: %v", mode, err)
		}
	}
}

// TestCampaignUnusable: only a denied permission or a read-only file
// system is the operator's folder at fault; other failures pass unchanged.
func TestCampaignUnusable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		err     error
		isField bool
	}{
		{"permission denied", &os.PathError{Op: "mkdir", Path: "/x", Err: syscall.EACCES}, true},
		{"read-only file system", fmt.Errorf("create /x: %w", &os.PathError{Op: "mkdir", Path: "/x", Err: syscall.EROFS}), true},
		{"disk full", &os.PathError{Op: "mkdir", Path: "/x", Err: syscall.ENOSPC}, false},
		{"not an errno", errors.New("disk on fire"), false},
	}
	for _, tt := range tests {
		_, got := AsFieldError(campaignUnusable("/x", "cannot create it", tt.err))
		if got != tt.isField {
			t.Errorf("%s: field error %v, want %v", tt.name, got, tt.isField)
		}
	}
	dir := t.TempDir()
	if err := checkCreatable(filepath.Join(dir, "a", "b")); err != nil {
		t.Errorf("a creatable folder refused: %v", err)
	}
}
