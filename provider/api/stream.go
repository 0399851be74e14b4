package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// reply is one assistant message, accumulated from a stream.
type reply struct {
	text, reasoning, finish string
	calls                   []toolCall
}

// toolCall is one function call of a reply.
type toolCall struct {
	id, name, args string
}

// complete sends one streamed chat-completions request and accumulates the
// answer. A failed request is a *requestFailure; a context error means the
// turn was stopped or its allowance passed.
func (a *Agent) complete(ctx context.Context, run *turnRun, model string,
	msgs []openai.ChatCompletionMessageParamUnion, tools []openai.ChatCompletionToolUnionParam,
) (reply, error) {
	run.requests++
	run.log.event("request", map[string]any{"request": run.requests, "model": model, "messages": len(msgs), "tools": len(tools)})
	p := &probe{}
	stream := a.chat.NewStreaming(ctx, newParams(model, msgs, tools), p.option())
	defer stream.Close()
	acc, usage, err := drain(stream)
	run.addUsage(usage)
	if ctx.Err() != nil {
		return reply{}, fmt.Errorf("request %d: %w", run.requests, ctx.Err())
	}
	if err == nil && !p.done && p.status < 400 {
		err = p.truncated()
	}
	if err != nil {
		f := classify(p, err, a.cfg.APIKey)
		run.log.event("request_failed", map[string]any{"request": run.requests, "status": p.status, "category": f.Category, "error": f.Message})
		return reply{}, &requestFailure{failure: f}
	}
	r := acc.reply()
	run.log.event("response", map[string]any{"request": run.requests, "finish_reason": r.finish, "tool_calls": len(r.calls), "usage": usageOf(usage)})
	return r, nil
}

func newParams(model string, msgs []openai.ChatCompletionMessageParamUnion, tools []openai.ChatCompletionToolUnionParam) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{
		Model: model, Messages: msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if len(tools) > 0 {
		params.Tools = tools
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}
	}
	return params
}

// accumulated is a stream's answer so far: the SDK's accumulator (content,
// tool calls concatenated per index) plus reasoning_content.
type accumulated struct {
	acc       openai.ChatCompletionAccumulator
	reasoning strings.Builder
}

// drain reads the stream to its end. usage is the last usage chunk (nil
// when none came); err is the stream's error or a chunk that does not fit.
func drain(stream *ssestream.Stream[openai.ChatCompletionChunk]) (*accumulated, *openai.CompletionUsage, error) {
	a := &accumulated{}
	var usage *openai.CompletionUsage
	for stream.Next() {
		chunk := stream.Current()
		if !a.acc.AddChunk(chunk) {
			return a, usage, errors.New("the response stream sent a chunk that does not fit the ones before it")
		}
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			usage = &u
		}
		collectReasoning(&a.reasoning, chunk)
	}
	return a, usage, stream.Err()
}

// collectReasoning keeps a provider's reasoning_content deltas (DeepSeek
// wants them echoed on assistant tool-call messages).
func collectReasoning(b *strings.Builder, chunk openai.ChatCompletionChunk) {
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		f, ok := ch.Delta.JSON.ExtraFields["reasoning_content"]
		if !ok || !f.Valid() {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil {
			b.WriteString(s)
		}
	}
}

// reply is the first choice's message.
func (a *accumulated) reply() reply {
	r := reply{reasoning: a.reasoning.String()}
	if len(a.acc.Choices) == 0 {
		return r
	}
	ch := a.acc.Choices[0]
	r.text, r.finish = ch.Message.Content, ch.FinishReason
	for i, c := range ch.Message.ToolCalls {
		if c.Function.Name == "" {
			continue
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		r.calls = append(r.calls, toolCall{id: id, name: c.Function.Name, args: c.Function.Arguments})
	}
	return r
}

// param is the reply as the assistant message of the next request. Tool
// arguments that are not JSON are echoed as {} so the endpoint accepts them.
func (r reply) param() openai.ChatCompletionMessageParamUnion {
	m := openai.ChatCompletionAssistantMessageParam{}
	if r.text != "" {
		m.Content.OfString = openai.String(r.text)
	}
	for _, c := range r.calls {
		args := c.args
		if !json.Valid([]byte(args)) {
			args = "{}"
		}
		m.ToolCalls = append(m.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: c.id, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.name, Arguments: args},
			},
		})
	}
	if r.reasoning != "" {
		m.SetExtraFields(map[string]any{"reasoning_content": r.reasoning})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &m}
}

func usageOf(u *openai.CompletionUsage) any {
	if u == nil {
		return nil
	}
	return map[string]int64{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens}
}
