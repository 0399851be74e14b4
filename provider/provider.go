package provider

import (
	"context"
	"time"
)

// Roles of a turn.
const (
	RoleWorker   = "worker"
	RoleReviewer = "reviewer"
	// RoleJudge is a tool-free reviewer (the support adjudication of the
	// scientific modes): no tools, no lab, no writable folder; a backend
	// that reports tool use in its stream counts it in Outcome.ToolCalls.
	RoleJudge = "judge"
)

// Reviewing reports whether role judges rather than works.
func Reviewing(role string) bool { return role == RoleReviewer || role == RoleJudge }

// Turn is one agent turn.
type Turn struct {
	Role    string
	Number  int
	Prompt  string            // stdin of the agent: the prompt, or the review packet
	Dir     string            // working folder
	LogDir  string            // where prompt, stdout and stderr are kept
	Env     map[string]string // variables set on top of the inherited environment
	Timeout time.Duration     // the turn allowance; a turn cut at it is a checkpoint, not a failure
	Cursor  string            // thread to resume (worker turns of session-keeping agents)
	Model   string            // the model of this turn (the judge model for reviewers)

	// Tools are the lab calls an in-process agent (the api backend) may use,
	// from the one lab schema; CallTool runs one and returns its JSON result.
	// Reviewer turns get none: the reviewer is tool-free.
	Tools    []Tool
	CallTool func(ctx context.Context, name string, args []byte) (string, error)
	// Study is the campaign folder (worker turns); MCPCommand is the argv of
	// the lab MCP server for this study, for agents that speak MCP.
	Study      string
	MCPCommand []string
	// StateDir is a folder the backend may keep across this study's worker
	// turns (a CLI's sessions and configuration); it is writable in the
	// record enclosure. Empty for reviewer turns.
	StateDir string
	// ToolFree asks for a turn with no tools at all (a judge), on backends
	// whose row says they can run one; the turn's Outcome then counts the
	// tool calls its stream showed anyway, and any voids its answer.
	ToolFree bool
	// Wrap, when set, rewrites the argv of the turn's agent process (the
	// engine's record enclosure) for the log folder of that launch, the
	// folder it makes writable (a retry in a new session has its own,
	// InFreshSession); the process is started, stopped and waited for as
	// it would be unwrapped.
	Wrap func(logDir string, argv []string) []string
}

// Tool is one function an agent may call.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any // JSON Schema of the arguments
}

// Outcome is what a turn produced.
type Outcome struct {
	ExitCode   int
	TimedOut   bool
	Duration   time.Duration
	LastLine   string // the last non-empty stdout line (a reviewer's verdict)
	StdoutTail string
	StderrTail string
	Cursor     string // the thread to resume next time, if any
	Failure    *Failure
	// Usage of this turn's thread: running totals for a resumed thread
	// (they replace the thread's earlier figures); nil when unknown.
	Thread                    string
	InputTokens, OutputTokens *int64
	// ToolCalls counts the tool calls the agent's stream showed, for
	// backends that report them (codex, api, claude); any voids a judge's answer.
	ToolCalls int
	// Lingering says a process of the turn's tree was still alive when the
	// turn returned (it outlived SIGKILL for a second): the turn's folder
	// may still change. False means nothing of the turn runs any more.
	Lingering bool
}

// Agent runs turns.
type Agent interface {
	// Name is the agent backend as recorded in the contract.
	Name() string
	// RunTurn runs one turn. The error is for harness failures (could not start);
	// an agent that fails is an Outcome with Failure set.
	RunTurn(ctx context.Context, t Turn) (Outcome, error)
}
