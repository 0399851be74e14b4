package engine

import (
	"strings"
	"testing"
)

// TestStudyFieldErrors: a bad study request is refused with a FieldError
// naming the field in the engine's words, never a CLI flag.
func TestStudyFieldErrors(t *testing.T) {
	t.Parallel()
	ok := func() Request {
		return Request{Mode: "minimal", AgentBackend: "scripted", ExecutionBackend: "bubblewrap", CompletionPolicy: "repair", WallSeconds: 60, TurnSeconds: 30}
	}
	tests := []struct {
		name  string
		edit  func(*Request)
		field Field
	}{
		{"mode", func(r *Request) { r.Mode = "frobnicate" }, FieldMode},
		{"policy", func(r *Request) { r.CompletionPolicy = "never" }, FieldCompletionPolicy},
		{"wall", func(r *Request) { r.WallSeconds = 0 }, FieldWallSeconds},
		{"turn zero", func(r *Request) { r.TurnSeconds = 0 }, FieldTurnSeconds},
		{"turn over wall", func(r *Request) { r.TurnSeconds = 61 }, FieldTurnSeconds},
	}
	for _, tt := range tests {
		r := ok()
		tt.edit(&r)
		err := validateRequest(&r)
		fe, isField := AsFieldError(err)
		switch {
		case !isField:
			t.Errorf("%s: %v is not a FieldError", tt.name, err)
		case fe.Field != tt.field:
			t.Errorf("%s: names %q, want %q", tt.name, fe.Field, tt.field)
		case strings.Contains(err.Error(), "--"):
			t.Errorf("%s: %q names a flag", tt.name, err)
		}
	}
	if _, err := NewCampaign(""); err == nil || strings.Contains(err.Error(), "--") {
		t.Errorf("NewCampaign(\"\") = %v, want a field error without flags", err)
	}
	if _, err := readOperatorFile("hypothesis", FieldHypothesisFile, ""); err == nil || strings.Contains(err.Error(), "--") {
		t.Errorf("a missing hypothesis file: %v, want a field error without flags", err)
	}
}
