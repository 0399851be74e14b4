// Package codex runs the OpenAI Codex CLI (`codex exec --json`) as a
// simjecture agent.
//
// Worker turns run in the study's research folder with full access
// (`--dangerously-bypass-approvals-and-sandbox`: experiments are isolated by
// simjecture, not by Codex) and resume the study's Codex thread; the lab
// calls reach the harness through this study's MCP server, configured per
// run with `-c mcp_servers.simjecture.*`, or through the shell fallback
// `"$SIMJECTURE_BIN" lab CALL`. Reviewer turns run in a fresh folder,
// `--sandbox read-only --ephemeral`, never resume and get no lab tools; the
// verdict is the last agent message.
//
// The JSONL on stdout gives the thread id (the cursor to resume), the
// thread's running token totals and the protocol's error events, which are
// the only things besides stderr that [provider.Classify] sees. The user's
// own Codex login, CODEX_HOME and config are used as they are and never
// written. See docs/codex.md for the wire format.
package codex

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/simjecture/simjecture/provider"
)

// Backend is the agent backend's name in the contract.
const Backend = "codex"

// MaxArgPrompt is the largest prompt passed as an argument; a longer one
// goes on stdin, with "-" as the prompt argument.
const MaxArgPrompt = 48000

// ServerName is the name the lab MCP server is registered under for Codex;
// its tools reach the model as the namespace "mcp__simjecture".
const ServerName = "simjecture"

// Agent runs turns with the Codex CLI.
type Agent struct {
	Executable string        // the codex program
	Grace      time.Duration // between SIGTERM and SIGKILL when a turn is stopped (default 5 s)
}

// Name is the agent backend.
func (a *Agent) Name() string { return Backend }

// RunTurn runs one `codex exec` and reads its JSONL. A worker turn whose
// thread Codex no longer has is run again, within the same allowance, in a
// new thread.
func (a *Agent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	started := time.Now()
	out, ev, err := a.run(ctx, t)
	if err != nil || !lostThread(t, out, ev) || ctx.Err() != nil {
		return out, err
	}
	return provider.InFreshSession(ctx, t, started, out, lostThreadNote, "new-thread",
		func(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
			out, _, err := a.run(ctx, t)
			return out, err
		})
}

// run launches codex once for t and fills the Outcome from its events.
func (a *Agent) run(ctx context.Context, t provider.Turn) (provider.Outcome, *events, error) {
	prompt := PromptFor(t)
	args, stdin := Args(t, prompt)
	ev := newEvents()
	l := provider.Launch{Executable: a.Executable, Args: args, Prompt: prompt, Events: ev, Grace: a.Grace}
	if stdin {
		l.Stdin = strings.NewReader(prompt)
	}
	out, err := provider.RunLaunch(ctx, t, l)
	if err != nil {
		return out, ev, err
	}
	thread, last, in, outTok := ev.snapshot()
	out.Cursor, out.Thread = thread, thread
	out.InputTokens, out.OutputTokens = in, outTok
	out.LastLine = strings.TrimSpace(last)
	if provider.Reviewing(t.Role) {
		out.Cursor = "" // an ephemeral reviewer thread is never resumed
	}
	out.ToolCalls = ev.tools()
	if ctx.Err() == nil {
		out.Failure = provider.Classify(out.ExitCode, out.TimedOut, out.StderrTail, ev.errorEvents())
	}
	return out, ev, nil
}

// lostThread reports a worker resume that failed because Codex has no
// record of the thread (another CODEX_HOME, deleted sessions).
func lostThread(t provider.Turn, out provider.Outcome, ev *events) bool {
	thread, _, _, _ := ev.snapshot()
	return t.Role == provider.RoleWorker && t.Cursor != "" && thread == "" && out.ExitCode != 0 &&
		!out.TimedOut && strings.Contains(out.StderrTail, "no rollout found")
}

const lostThreadNote = "(The previous Codex session of this study could not be resumed; this is a new session. " +
	"The operator's hypothesis and instructions are in ../operator/hypothesis.txt and ../operator/instructions.txt; " +
	"call the lab status tool for the study's state before anything else.)\n\n"

// Args is the command line of one turn after the executable, and whether
// the prompt goes on stdin.
func Args(t provider.Turn, prompt string) ([]string, bool) {
	args := []string{"exec"}
	if t.Role == provider.RoleWorker && t.Cursor != "" {
		args = append(args, "resume", t.Cursor)
	}
	if t.Model != "" {
		args = append(args, "--model", t.Model)
	}
	args = append(args, "--json", "--skip-git-repo-check")
	if provider.Reviewing(t.Role) {
		args = append(args, "--sandbox", "read-only", "--ephemeral")
	} else {
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
		args = append(args, mcpConfig(t.MCPCommand)...)
	}
	if len(prompt) > MaxArgPrompt {
		return append(args, "-"), true
	}
	return append(args, prompt), false
}

// mcpConfig registers the study's lab MCP server for this run only, as
// `-c` overrides (TOML values); the user's config.toml is never written.
func mcpConfig(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	key := "mcp_servers." + ServerName + "."
	rest := argv[1:]
	if rest == nil {
		rest = []string{}
	}
	return []string{
		"-c", key + "command=" + tomlString(argv[0]),
		"-c", key + "args=" + tomlStrings(rest),
	}
}

// tomlString quotes s as a TOML basic string; JSON's string escapes are a
// subset of TOML's.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func tomlStrings(list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = tomlString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// PromptFor is what Codex is asked: for a worker, the supervisor's prompt
// (with a word on the MCP tools when the thread is new); for a reviewer,
// the review instructions and the packet.
func PromptFor(t provider.Turn) string {
	switch t.Role {
	case provider.RoleReviewer:
		return provider.ReviewerPrompt + t.Prompt + "\n"
	case provider.RoleJudge:
		return provider.JudgePrompt + t.Prompt + "\n"
	}
	prompt := t.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = provider.ContinuePrompt // Codex needs a prompt; nothing changed since the last turn
	}
	if t.Cursor == "" && len(t.MCPCommand) > 0 {
		return prompt + mcpNote
	}
	return prompt
}

const mcpNote = `
# Lab tools in Codex
The lab calls named above are also MCP tools of the server "` + ServerName + `",
with the same JSON arguments and results as "$SIMJECTURE_BIN" lab CALL. Use the tools; the shell command is the fallback.
`
