// Package claude runs the Claude Code CLI (`claude -p --output-format
// stream-json --verbose`) as a simjecture agent.
//
// Every turn runs with a configuration of this study's own: HOME and
// CLAUDE_CONFIG_DIR point into the turn's state folder ([provider.Turn]
// StateDir: kept across worker turns, so their sessions can be resumed;
// a reviewer's is inside its own fresh log folder), only user settings
// from there are read (plus the operator's settings file, if the study
// names one, with `--settings`), and nonessential traffic is off, so the
// CLI talks to the model server named by ANTHROPIC_BASE_URL only and never
// reads the operator's ~/.claude.
//
// Worker turns run in the research folder and resume the study's session
// (`--resume ID`); the lab calls are the tools of this study's MCP server,
// named in an `--mcp-config` file in the turn's log folder
// (`--strict-mcp-config`), and only they are pre-approved
// (`--allowedTools`); file edits in the research folder are accepted
// (`--permission-mode acceptEdits`); anything else Claude Code would ask
// about is denied unless the operator's settings allow it. Reviewer turns
// run a fresh session with the read-only file tools only; a tool-free turn
// (a judge) gets no tools at all, and a tool call in its stream voids its
// answer.
//
// The stream's init and result events give the session id and the turn's
// token usage; its API error events (and stderr) are all that failures are
// classified from. See docs/claude.md for the wire format.
package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/simjecture/simjecture/provider"
)

// Backend is the agent backend's name in the contract.
const Backend = "claude"

// ServerName is the name the lab MCP server is registered under; its
// tools reach the model as "mcp__simjecture__CALL".
const ServerName = "simjecture"

// ToolPrefix is the prefix of the lab tools' names as the model sees them.
const ToolPrefix = "mcp__" + ServerName + "__"

// ReviewerTools are the built-in tools of a reviewer: reading only.
const ReviewerTools = "Read,Glob,Grep"

// Agent runs turns with the Claude Code CLI.
type Agent struct {
	Executable string        // the claude program
	Settings   string        // the operator's Claude Code settings file, if any
	Grace      time.Duration // between SIGTERM and SIGKILL when a turn is stopped (default 5 s)
}

// Name is the agent backend.
func (a *Agent) Name() string { return Backend }

// RunTurn runs one `claude -p` and reads its stream. A worker turn whose
// session Claude Code no longer has is run again, within the same
// allowance, in a new session.
func (a *Agent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	started := time.Now()
	out, st, err := a.run(ctx, t)
	if err != nil || !lostSession(t, out, st) || ctx.Err() != nil {
		return out, err
	}
	return provider.InFreshSession(ctx, t, started, out, lostSessionNote, "new-session",
		func(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
			out, _, err := a.run(ctx, t)
			return out, err
		})
}

// run launches claude once for t and fills the Outcome from its stream.
func (a *Agent) run(ctx context.Context, t provider.Turn) (provider.Outcome, *stream, error) {
	state := stateDir(t)
	// Real folders only, never a symlink an agent left in its state folder.
	for _, d := range []string{t.LogDir, state, filepath.Join(state, "home"), filepath.Join(state, "config")} {
		if err := provider.EnsureDir(d, 0o700); err != nil {
			return provider.Outcome{}, nil, fmt.Errorf("claude state folder: %w", err)
		}
	}
	args, err := a.args(t)
	if err != nil {
		return provider.Outcome{}, nil, err
	}
	t.Env = maps.Clone(t.Env)
	if t.Env == nil {
		t.Env = map[string]string{}
	}
	maps.Copy(t.Env, Env(state))
	prompt := PromptFor(t)
	st := newStream()
	l := provider.Launch{Executable: a.Executable, Args: args, Prompt: prompt, Stdin: strings.NewReader(prompt), Events: st, Grace: a.Grace}
	out, err := provider.RunLaunch(ctx, t, l)
	if err != nil {
		return out, st, err
	}
	st.fill(&out, t)
	if ctx.Err() == nil {
		out.Failure = st.failure(out)
	}
	return out, st, nil
}

// stateDir is where a turn's HOME and CLAUDE_CONFIG_DIR live: the study's
// state folder for workers, a folder of the turn's own otherwise.
func stateDir(t provider.Turn) string {
	if t.Role == provider.RoleWorker && t.StateDir != "" {
		return t.StateDir
	}
	return filepath.Join(t.LogDir, "claude-state")
}

// Env is what a turn sets on top of the inherited environment, for a
// state folder: a HOME and configuration of its own, no traffic but the
// model's, no self-update, and the lab tools offered with their schemas
// rather than deferred behind a tool search.
func Env(state string) map[string]string {
	return map[string]string{
		"ENABLE_TOOL_SEARCH": "false",
		"HOME":               filepath.Join(state, "home"),
		"CLAUDE_CONFIG_DIR":  filepath.Join(state, "config"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
	}
}

// args is the command line of one turn after the executable; a worker's
// MCP configuration is written into its log folder first.
func (a *Agent) args(t provider.Turn) ([]string, error) {
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--setting-sources", "user"}
	if t.Model != "" {
		args = append(args, "--model", t.Model)
	}
	if a.Settings != "" {
		args = append(args, "--settings", a.Settings)
	}
	switch {
	case t.ToolFree:
		return append(args, "--tools", "", "--strict-mcp-config", "--no-session-persistence"), nil
	case t.Role != provider.RoleWorker:
		return append(args, "--tools", ReviewerTools, "--allowedTools", ReviewerTools, "--strict-mcp-config",
			"--no-session-persistence"), nil
	}
	if t.Cursor != "" {
		args = append(args, "--resume", t.Cursor)
	}
	args = append(args, "--permission-mode", "acceptEdits")
	if len(t.MCPCommand) == 0 {
		return args, nil
	}
	cfg := filepath.Join(t.LogDir, "mcp.json")
	if err := provider.WriteNew(cfg, MCPConfig(t.MCPCommand), 0o600); err != nil {
		return nil, fmt.Errorf("write the MCP configuration: %w", err)
	}
	args = append(args, "--mcp-config", cfg, "--strict-mcp-config")
	if names := AllowedTools(t.Tools); names != "" {
		args = append(args, "--allowedTools", names)
	}
	return args, nil
}

// MCPConfig is the `--mcp-config` file registering the study's lab MCP
// server (argv) under ServerName.
func MCPConfig(argv []string) []byte {
	server := map[string]any{"type": "stdio", "command": argv[0], "args": append([]string{}, argv[1:]...)}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{ServerName: server}}, "", "  ")
	return b
}

// AllowedTools names the lab tools as the model sees them, for
// `--allowedTools`.
func AllowedTools(tools []provider.Tool) string {
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = ToolPrefix + tool.Name
	}
	return strings.Join(names, ",")
}

// PromptFor is what Claude Code is asked on stdin: for a worker, the
// supervisor's prompt (with a word on the MCP tools when the session is
// new); for a reviewer, the review instructions and the packet; for a
// tool-free turn, the judge instructions and the packet.
func PromptFor(t provider.Turn) string {
	switch {
	case t.ToolFree:
		return provider.JudgePrompt + t.Prompt + "\n"
	case t.Role != provider.RoleWorker:
		return provider.ReviewerPrompt + t.Prompt + "\n"
	}
	prompt := t.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = provider.ContinuePrompt
	}
	if t.Cursor == "" && len(t.MCPCommand) > 0 {
		return prompt + mcpNote
	}
	return prompt
}

const mcpNote = `
# Lab tools in Claude Code
The lab calls named above are also the MCP tools ` + ToolPrefix + `CALL,
with the same JSON arguments and results as "$SIMJECTURE_BIN" lab CALL. Use the tools.
`

const lostSessionNote = "(The previous Claude Code session of this study could not be resumed; this is a new session. " +
	"The operator's hypothesis and instructions are in ../operator/hypothesis.txt and ../operator/instructions.txt; " +
	"call the lab status tool for the study's state before anything else.)\n\n"

// lostSession reports a worker resume that failed because Claude Code has
// no record of the session.
func lostSession(t provider.Turn, out provider.Outcome, st *stream) bool {
	return t.Role == provider.RoleWorker && t.Cursor != "" && out.ExitCode != 0 && !out.TimedOut &&
		!st.started() && strings.Contains(out.StderrTail, "No conversation found")
}

// CheckSettings wants path to be a readable Claude Code settings file: one
// JSON object.
func CheckSettings(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the Claude Code settings file: %w", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("%s is not a Claude Code settings file (a JSON object): %w", path, err)
	}
	return nil
}
