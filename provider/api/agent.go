package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/simjecture/simjecture/provider"
)

// Backend is the agent backend's name in the contract.
const Backend = "api"

// DefaultMaxSteps caps the requests of one worker turn.
const DefaultMaxSteps = 40

// Agent runs turns against an OpenAI-compatible chat-completions endpoint.
type Agent struct {
	cfg  Config
	chat openai.ChatCompletionService
	// MaxSteps caps the requests of one worker turn (DefaultMaxSteps when 0).
	MaxSteps int
}

// New builds the agent of a checked connection. The client reads nothing
// from the environment (no OPENAI_* variable) and never retries by itself:
// the supervisor owns retries and their accounting.
func New(cfg Config) *Agent {
	var transport http.RoundTripper = http.DefaultTransport
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		transport = t.Clone()
	}
	chat := openai.NewChatCompletionService(
		option.WithHTTPClient(&http.Client{Transport: transport}),
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	)
	return &Agent{cfg: cfg, chat: chat}
}

// Name is the agent backend.
func (a *Agent) Name() string { return Backend }

// RunTurn runs one worker or reviewer turn, bounded by the turn allowance.
// Provider failures come back as Outcome.Failure; the error return is for
// harness failures only.
func (a *Agent) RunTurn(ctx context.Context, t provider.Turn) (provider.Outcome, error) {
	log, err := openTranscript(t.LogDir, t.Prompt, a.cfg.APIKey)
	if err != nil {
		return provider.Outcome{}, err
	}
	defer log.Close()
	turnCtx, cancel := withAllowance(ctx, t.Timeout)
	defer cancel()
	run := &turnRun{log: log}
	start := time.Now()
	if provider.Reviewing(t.Role) || t.ToolFree {
		err = a.review(turnCtx, t, run)
	} else {
		err = a.work(turnCtx, t, run)
	}
	return a.outcome(ctx, turnCtx, t, run, err, time.Since(start))
}

func withAllowance(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// outcome maps how the turn ended to the Outcome the engine reads.
func (a *Agent) outcome(ctx, turnCtx context.Context, t provider.Turn, run *turnRun, err error, d time.Duration) (provider.Outcome, error) {
	out := provider.Outcome{Duration: d, StdoutTail: run.tail(), InputTokens: run.in, OutputTokens: run.out,
		Cursor: run.cursor, ToolCalls: run.toolCalls}
	out.LastLine = provider.LastLine(run.final)
	if provider.Reviewing(t.Role) {
		out.LastLine = verdictLine(run.final)
	}
	var rf *requestFailure
	switch {
	case err == nil:
	case ctx.Err() != nil: // the supervisor stopped the turn
		out.ExitCode = 143
		run.log.event("stopped", nil)
	case turnCtx.Err() != nil: // the allowance passed: a checkpoint, not a failure
		out.ExitCode, out.TimedOut = 124, true
		run.log.event("turn_allowance_passed", map[string]any{"seconds": t.Timeout.Seconds()})
	case errors.As(err, &rf):
		out.ExitCode, out.Failure, out.StderrTail = 1, rf.failure, rf.failure.Message
		run.log.fail(rf.failure.Category + ": " + rf.failure.Message)
	default:
		run.log.fail(err.Error())
		return out, fmt.Errorf("api %s turn: %w", t.Role, err)
	}
	return out, nil
}

// work is the worker's agent loop, on the study's stored conversation:
// every message is stored as it is made, and the conversation is bounded
// before each request.
func (a *Agent) work(ctx context.Context, t provider.Turn, run *turnRun) error {
	box, err := newToolbox(t)
	if err != nil {
		return err
	}
	defer box.Close()
	mem, err := a.remember(t)
	if err != nil {
		return err
	}
	defer mem.Close()
	run.cursor = mem.id
	for step := 1; step <= a.maxSteps(); step++ {
		if err := mem.bound(a.cfg.conversationLimit()); err != nil {
			return err
		}
		r, err := a.complete(ctx, run, t.Model, params(mem.msgs), box.defs)
		if err != nil {
			return err
		}
		run.answer(r.text)
		answer := msg{Role: "assistant", Content: r.text, Reasoning: r.reasoning, Calls: r.calls, Turn: t.Number, Done: len(r.calls) == 0}
		if err := mem.add(answer); err != nil {
			return err
		}
		if len(r.calls) == 0 {
			return mem.bound(a.cfg.conversationLimit()) // what stays stored is bounded too
		}
		if err := a.runCalls(ctx, t, run, box, mem, r.calls); err != nil {
			return err
		}
	}
	run.log.event("step_cap", map[string]any{"steps": a.maxSteps()})
	return nil
}

// runCalls runs an answer's tool calls, storing each result.
func (a *Agent) runCalls(ctx context.Context, t provider.Turn, run *turnRun, box *toolbox, mem *memory, calls []toolCall) error {
	for _, c := range calls {
		result, err := box.run(ctx, c)
		if err != nil {
			return err
		}
		run.log.event("tool", map[string]any{"id": c.id, "name": c.name, "arguments": c.args, "result": result})
		if err := mem.add(msg{Role: "tool", Content: result, CallID: c.id, Tool: c.name, Turn: t.Number}); err != nil {
			return err
		}
	}
	return nil
}

func (a *Agent) maxSteps() int {
	if a.MaxSteps > 0 {
		return a.MaxSteps
	}
	return DefaultMaxSteps
}

// review is one fresh, tool-free request; the verdict is in the answer.
func (a *Agent) review(ctx context.Context, t provider.Turn, run *turnRun) error {
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(reviewerSystem), openai.UserMessage(t.Prompt)}
	r, err := a.complete(ctx, run, t.Model, msgs, nil)
	if err != nil {
		return err
	}
	if len(r.calls) > 0 {
		run.toolCalls += len(r.calls)
		run.log.event("reviewer_tool_call_ignored", map[string]any{"calls": len(r.calls)})
	}
	run.answer(r.text)
	return nil
}

const workerSystem = `You are the research agent of a simjecture study, working through function tools.
The lab calls named in the prompt are tools with the same names and arguments; call them directly and ignore any mention of "$SIMJECTURE_BIN lab".
Write programs and inputs with write_file (paths under research/); read research/ files and experiments/ID/ artifacts with read_file and list_files.
run returns at once with status queued. Once you have queued the work of this turn or asked for a review, end the turn by answering without a tool call: you get a new turn when experiments finish or a review is resolved.`

const reviewerSystem = `You are the independent reviewer of a simjecture study. You receive one review packet (JSON) and you have no tools.
Judge only from the packet: the claim, the requested disposition, the experiments' receipts and artifacts.
End your answer with the verdict as one JSON object on the last line, with exactly these fields:
{"claim_id": "...", "decision": "approved" | "needs_revision", "disposition": "supported" | "falsified" | "unresolved", "rationale": "at least sixteen characters", "evidence_gaps": [], "next_test": null}
approved needs no evidence gaps and a disposition other than unresolved; needs_revision needs at least one gap.
When the packet carries its own verdict_schema (the contract reviews and support adjudications of the scientific modes), answer in exactly that schema instead.`
