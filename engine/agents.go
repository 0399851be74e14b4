package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/provider/api"
	"github.com/simjecture/simjecture/provider/claude"
	"github.com/simjecture/simjecture/provider/codex"
	"github.com/simjecture/simjecture/provider/scripted"
)

// This file is the table of agent backends: for each, the request fields
// it takes, the check of a request and the constructor of its agent. A new
// backend is one row here plus its package under provider/.

// Field is a request field an agent backend may take. Its value is the
// engine's word for it; the CLI shows it as a flag, the TUI as a form label.
type Field string

// The fields of a request that depend on the agent backend.
const (
	FieldModel          Field = "model"
	FieldExecutable     Field = "executable"
	FieldProviderConfig Field = "provider config"
)

// agentFields are the backend-dependent fields, in the order forms show them,
// with where each lives in a request.
var agentFields = []struct {
	field Field
	in    func(*Request) *string
}{
	{FieldModel, func(r *Request) *string { return &r.Model }},
	{FieldExecutable, func(r *Request) *string { return &r.Executable }},
	{FieldProviderConfig, func(r *Request) *string { return &r.ProviderConfig }},
}

// AgentFields lists the backend-dependent fields in form order.
func AgentFields() []Field {
	out := make([]Field, len(agentFields))
	for i, f := range agentFields {
		out[i] = f.field
	}
	return out
}

// Need says whether an agent backend takes a field. The zero value refuses it.
type Need int

// A field is refused, may be given, or must be given.
const (
	Forbidden Need = iota
	Optional
	Required
)

// AgentBackend is one row of the table.
type AgentBackend struct {
	Name  string
	Needs map[Field]Need // a field not listed is Forbidden
	// Check resolves a request whose fields already meet Needs (absolute
	// paths, defaults) and refuses what the backend cannot use.
	Check func(r *Request) error
	// New builds the agent of a study from its frozen contract; self is
	// this binary.
	New func(k Contract, self string) (provider.Agent, error)
	// Program is the CLI looked up on PATH when no executable is given
	// (doctor reports where it is found); empty for backends without one.
	Program string
	// ToolFree says the backend can run a turn with no tools at all
	// (provider.Turn.ToolFree: a judge) and reports the tool calls its
	// stream shows anyway (provider.Outcome.ToolCalls), which void it.
	// ToolFreeHow says how, and Judge turns a review turn into that turn.
	ToolFree    bool
	ToolFreeHow string
	Judge       func(t provider.Turn) provider.Turn
	// Settings are the files and folders the backend's agent reads as its
	// settings besides the study's own (the reviewer's among them), which
	// an enclosed worker could otherwise rewrite in its home or /tmp
	// (engine/settings.go); nil for none.
	Settings func(k Contract) []string
}

// Need is how the backend takes f.
func (b AgentBackend) Need(f Field) Need { return b.Needs[f] }

var agentBackends = []AgentBackend{
	{Name: codex.Backend, Needs: map[Field]Need{FieldModel: Optional, FieldExecutable: Optional},
		Check: checkCodex, New: newCodex, Program: "codex",
		ToolFree: true, ToolFreeHow: "codex exec --sandbox read-only --ephemeral with no MCP server; any tool item in its JSON stream voids the verdict",
		Judge: judgeTurn, Settings: codexSettings},
	{Name: claude.Backend, Needs: map[Field]Need{FieldModel: Optional, FieldExecutable: Optional, FieldProviderConfig: Optional},
		Check: checkClaude, New: newClaude, Program: "claude",
		ToolFree: true, ToolFreeHow: "claude -p with no MCP server and every built-in tool disallowed; any tool_use in its stream voids the verdict",
		Judge: judgeTurn, Settings: providerConfigSetting},
	{Name: api.Backend, Needs: map[Field]Need{FieldModel: Required, FieldProviderConfig: Required},
		Check: checkAPI, New: newAPI,
		ToolFree: true, ToolFreeHow: "no tool definitions are sent; a tool call the model asks for voids the verdict",
		Judge: judgeTurn, Settings: providerConfigSetting},
	{Name: "command", Needs: map[Field]Need{FieldModel: Optional, FieldExecutable: Required},
		Check: checkCommand, New: newCommand,
		ToolFree: true, ToolFreeHow: "SIMJECTURE_ROLE=judge in a fresh folder, without SIMJECTURE_STUDY; the lab socket refuses every call while it runs",
		Judge: judgeTurn},
	{Name: "scripted", Needs: map[Field]Need{FieldModel: Optional},
		Check: checkScripted, New: newScripted,
		ToolFree: true, ToolFreeHow: "SIMJECTURE_ROLE=judge with the packet on stdin and no lab; it reads nothing else",
		Judge: judgeTurn},
}

// judgeTurn strips a review turn of every tool: no lab tools, no MCP
// server, no study folder, the judge's role.
func judgeTurn(t provider.Turn) provider.Turn {
	t.Role, t.ToolFree, t.Tools, t.CallTool, t.MCPCommand, t.Study = provider.RoleJudge, true, nil, nil, nil, ""
	env := map[string]string{}
	for k, v := range t.Env {
		if k != "SIMJECTURE_STUDY" {
			env[k] = v
		}
	}
	env["SIMJECTURE_ROLE"] = provider.RoleJudge
	t.Env = env
	return t
}

// AgentBackends lists the agent backends of this build, in table order.
func AgentBackends() []AgentBackend { return slices.Clone(agentBackends) }

// AgentBackendNames lists their names, in table order.
func AgentBackendNames() []string {
	out := make([]string, len(agentBackends))
	for i, b := range agentBackends {
		out[i] = b.Name
	}
	return out
}

// LookupAgentBackend finds the row of a backend.
func LookupAgentBackend(name string) (AgentBackend, bool) {
	i := slices.IndexFunc(agentBackends, func(b AgentBackend) bool { return b.Name == name })
	if i < 0 {
		return AgentBackend{}, false
	}
	return agentBackends[i], true
}

// checkAgent checks the backend-dependent fields of r against the table,
// then runs the backend's own check.
func checkAgent(r *Request) error {
	b, ok := LookupAgentBackend(r.AgentBackend)
	if !ok {
		return checkChoice(FieldAgentBackend, r.AgentBackend, AgentBackendNames())
	}
	for _, f := range agentFields {
		given := *f.in(r) != ""
		switch need := b.Need(f.field); {
		case need == Required && !given:
			return &FieldError{Backend: b.Name, Field: f.field, Problem: Missing}
		case need == Forbidden && given:
			return &FieldError{Backend: b.Name, Field: f.field, Problem: Refused}
		}
	}
	return b.Check(r)
}

// CheckAgentRequest checks the agent fields of r (backend, model,
// executable, provider config) as a new study would, resolving them in
// place, for callers that run an agent outside a study (bench run).
func CheckAgentRequest(r *Request) error { return checkAgent(r) }

// NewAgent builds the agent of a study from its frozen contract.
func NewAgent(k Contract, self string) (provider.Agent, error) {
	b, ok := LookupAgentBackend(k.AgentBackend)
	if !ok {
		return nil, fmt.Errorf("the study records agent backend %q, which this build does not have: %w", k.AgentBackend, ErrInvalid)
	}
	return b.New(k, self)
}

// checkCodex: the executable (default "codex" on PATH) must exist; the
// model may be left to Codex's own default.
func checkCodex(r *Request) error { return checkProgram(r, "codex", "@openai/codex") }

// checkClaude: the executable (default "claude" on PATH) must exist; the
// provider config, if given, is a Claude Code settings file (a JSON
// object) passed with --settings.
func checkClaude(r *Request) error {
	if err := checkProgram(r, "claude", "@anthropic-ai/claude-code"); err != nil || r.ProviderConfig == "" {
		return err
	}
	if err := absPath(r, FieldProviderConfig, &r.ProviderConfig, r.ProviderConfig); err != nil {
		return err
	}
	if err := claude.CheckSettings(r.ProviderConfig); err != nil {
		return invalidField(r, FieldProviderConfig, err)
	}
	return nil
}

// checkProgram resolves the executable of r's backend (program, its row's
// Program, on PATH when none is given) to an absolute path; pkg is the npm
// package the error suggests.
func checkProgram(r *Request, program, pkg string) error {
	exe := r.Executable
	if exe == "" {
		exe = program
	}
	path, err := exec.LookPath(exe)
	if err != nil {
		return invalidField(r, FieldExecutable, fmt.Errorf("%s not found (install %s or give its path)", exe, pkg))
	}
	return absPath(r, FieldExecutable, &r.Executable, path)
}

// checkAPI checks the connection file (mode 0600, a usable base_url, a
// key) so that an unusable one writes nothing.
func checkAPI(r *Request) error {
	if err := absPath(r, FieldProviderConfig, &r.ProviderConfig, r.ProviderConfig); err != nil {
		return err
	}
	if err := api.CheckConfig(r.ProviderConfig); err != nil {
		return invalidField(r, FieldProviderConfig, err)
	}
	return nil
}

// checkCommand: the executable must be an executable file.
func checkCommand(r *Request) error {
	if err := absPath(r, FieldExecutable, &r.Executable, r.Executable); err != nil {
		return err
	}
	st, err := os.Stat(r.Executable)
	if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return invalidField(r, FieldExecutable, fmt.Errorf("%s is not an executable file", r.Executable))
	}
	return nil
}

// checkScripted names the built-in model when none is given, and refuses a
// hypothesis it cannot test: the scripted agent plays the bundled demo, and
// plans only for a claim that names a numerical threshold ("within 1 %"),
// which it would otherwise fail to find on every turn until the deadline.
func checkScripted(r *Request) error {
	if r.Model == "" {
		r.Model = "scripted-demo"
	}
	if r.HypothesisFile == "" {
		return nil // a continuation's, checked when its parent ran
	}
	text, err := os.ReadFile(r.HypothesisFile)
	if err != nil {
		return nil // the hypothesis file's own check names that
	}
	if _, err := scripted.ParseCriterion(string(text)); err != nil {
		return invalidField(r, FieldHypothesisFile, fmt.Errorf("the scripted agent (the demo's) tests only a hypothesis that names a numerical threshold, such as \"within 1 %%\": %w", err))
	}
	return nil
}

// newCodex: k.Executable is the codex program resolved when the study was
// created; the worker and judge models travel with each turn.
func newCodex(k Contract, _ string) (provider.Agent, error) {
	if k.Executable == "" {
		return nil, fmt.Errorf("the codex study records no executable: %w", ErrInvalid)
	}
	return &codex.Agent{Executable: k.Executable}, nil
}

// newClaude: k.Executable is the claude program resolved when the study
// was created; the settings file, if any, is read by Claude Code itself.
func newClaude(k Contract, _ string) (provider.Agent, error) {
	if k.Executable == "" {
		return nil, fmt.Errorf("the claude study records no executable: %w", ErrInvalid)
	}
	return &claude.Agent{Executable: k.Executable, Settings: k.ProviderConfig}, nil
}

// newAPI loads the connection file again at every start; a bad one is
// invalid input.
func newAPI(k Contract, _ string) (provider.Agent, error) {
	cfg, err := api.LoadConfig(k.ProviderConfig)
	if err != nil {
		return nil, &FieldError{Backend: k.AgentBackend, Field: FieldProviderConfig, Problem: Invalid, Err: err}
	}
	return api.New(cfg), nil
}

func newCommand(k Contract, _ string) (provider.Agent, error) {
	return &provider.Command{Backend: k.AgentBackend, Executable: k.Executable}, nil
}

// newScripted runs this binary's hidden scripted-agent subcommand.
func newScripted(k Contract, self string) (provider.Agent, error) {
	return &provider.Command{Backend: k.AgentBackend, Executable: self, Args: []string{scripted.Command}}, nil
}

// Problem is what is wrong with a field.
type Problem int

// A field is missing, given although the backend takes none, or unusable.
const (
	Missing Problem = iota + 1
	Refused
	Invalid
)

// FieldError is invalid input in one request field: of an agent backend
// (Backend set), or of every study (Backend empty; see fields.go). It
// names the field, not a flag or a form label: each front end renders it
// in its own words. It wraps ErrInvalid.
type FieldError struct {
	Backend string
	Field   Field
	Problem Problem
	Err     error // for Invalid: what is wrong with the value
	With    Field // for Invalid: the other field its value conflicts with, if any
}

func (e *FieldError) Error() string {
	switch {
	case e.Backend == "" && e.Problem == Missing:
		return fmt.Sprintf("the %s is required", e.Field)
	case e.Backend == "" && e.With != "":
		return fmt.Sprintf("%s with this %s: %v", e.Field, e.With, e.Err)
	case e.Backend == "":
		return fmt.Sprintf("%s: %v", e.Field, e.Err)
	}
	switch e.Problem {
	case Missing:
		return fmt.Sprintf("the %s agent backend needs the %s", e.Backend, e.Field)
	case Refused:
		return fmt.Sprintf("the %s agent backend takes no %s", e.Backend, e.Field)
	}
	return fmt.Sprintf("%s: %v", e.Field, e.Err)
}

// Unwrap is ErrInvalid and the cause, if any.
func (e *FieldError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

// AsFieldError finds a FieldError in err's chain.
func AsFieldError(err error) (*FieldError, bool) {
	var fe *FieldError
	return fe, errors.As(err, &fe)
}

func invalidField(r *Request, f Field, err error) error {
	return &FieldError{Backend: r.AgentBackend, Field: f, Problem: Invalid, Err: err}
}

// absPath sets *dst, the value of field f of r, to path made absolute.
func absPath(r *Request, f Field, dst *string, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return invalidField(r, f, err)
	}
	*dst = abs
	return nil
}

// Field is where field f lives in r, or nil when f is not a
// backend-dependent field.
func (r *Request) Field(f Field) *string {
	for _, af := range agentFields {
		if af.field == f {
			return af.in(r)
		}
	}
	return nil
}
