package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestAgentBackendsInTheCLI: --backend's help names every row of the agent
// backend table, and every backend-dependent field has a flag of study.
func TestAgentBackendsInTheCLI(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	f := newStudyFlags(stdio{out: &bytes.Buffer{}, err: &errOut})
	help := f.fs.Lookup("backend").Usage
	for _, b := range engine.AgentBackends() {
		if !strings.Contains(help, b.Name) {
			t.Errorf("--backend's help %q does not name %s", help, b.Name)
		}
	}
	for _, field := range append(engine.AgentFields(), engine.StudyFields()...) {
		flag, ok := fieldFlags[field]
		if !ok || f.fs.Lookup(flag.name) == nil {
			t.Errorf("field %q has no flag of study (fieldFlags %+v)", field, flag)
		}
	}
}

// TestFieldErrorsInFlags: the CLI words of field errors, as scripts and the
// e2e tests know them.
func TestFieldErrorsInFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *engine.FieldError
		want string
	}{
		{&engine.FieldError{Backend: "api", Field: engine.FieldProviderConfig, Problem: engine.Missing},
			"--backend api needs --provider-config FILE (base_url, api_key; mode 0600)"},
		{&engine.FieldError{Backend: "api", Field: engine.FieldModel, Problem: engine.Missing}, "--backend api needs --model"},
		{&engine.FieldError{Backend: "command", Field: engine.FieldExecutable, Problem: engine.Missing},
			"--backend command needs --executable PATH"},
		{&engine.FieldError{Backend: "scripted", Field: engine.FieldExecutable, Problem: engine.Refused},
			"--backend scripted takes no --executable"},
		{&engine.FieldError{Backend: "codex", Field: engine.FieldExecutable, Problem: engine.Invalid, Err: errors.New("codex not found")},
			"--backend codex: --executable: codex not found"},
		{&engine.FieldError{Field: engine.FieldHypothesisFile, Problem: engine.Missing}, "--hypothesis-file FILE is required"},
		{&engine.FieldError{Field: engine.FieldTurnSeconds, Problem: engine.Invalid, Err: errors.New("0: must be more than 0")},
			"--turn-seconds: 0: must be more than 0"},
		{&engine.FieldError{Field: engine.FieldAgentBackend, Problem: engine.Invalid, Err: errors.New(`"x": choose one of codex`)},
			`--backend: "x": choose one of codex`},
		{&engine.FieldError{Field: engine.FieldCompletionPolicy, Problem: engine.Invalid, With: engine.FieldMode,
			Err: errors.New(`"answer": a structured study always completes by repair`)},
			`--completion-policy with --mode: "answer": a structured study always completes by repair`},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if code := fail(stdio{out: &bytes.Buffer{}, err: &out}, tt.err); code != exitInvalid {
			t.Errorf("%v: exit %d, want %d", tt.err, code, exitInvalid)
		}
		if got := strings.TrimSpace(out.String()); got != "simjecture: "+tt.want {
			t.Errorf("got %q, want %q", got, "simjecture: "+tt.want)
		}
	}
}
