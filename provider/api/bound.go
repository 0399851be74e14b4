package api

import (
	"fmt"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
)

// DefaultMaxConversationChars bounds a worker's stored conversation when
// the connection file does not.
const DefaultMaxConversationChars = 200_000

// MinConversationChars is the smallest bound a connection file may set.
const MinConversationChars = 20_000

// chars is what a message counts toward the bound: its text and its calls'
// names and arguments, in characters.
func (m msg) chars() int {
	n := utf8.RuneCountInString(m.Content) + utf8.RuneCountInString(m.Reasoning)
	for _, c := range m.Calls {
		n += utf8.RuneCountInString(c.name) + utf8.RuneCountInString(c.args)
	}
	return n
}

func total(msgs []msg) int {
	n := 0
	for _, m := range msgs {
		n += m.chars()
	}
	return n
}

// droppedNote stands in for a tool result dropped to bound the conversation.
const droppedNote = "[result of %s dropped to keep the conversation under its size limit (%d characters); call it again if needed]"

// bounded returns msgs within limit characters, or msgs itself when they
// fit. First the oldest tool results of earlier turns are replaced by a
// short note, oldest first; if that is not enough, the oldest earlier
// turns are dropped whole (the system message, the first prompt — the
// study's guide — and the current turn are always kept).
func bounded(msgs []msg, limit, turn int) []msg {
	if total(msgs) <= limit {
		return msgs
	}
	out := append([]msg(nil), msgs...)
	n := total(out)
	for i := range out {
		if n <= limit {
			return out
		}
		if m := out[i]; m.Role == "tool" && m.Turn < turn && m.Tool != "" {
			note := fmt.Sprintf(droppedNote, m.Tool, m.chars())
			if utf8.RuneCountInString(note) < m.chars() {
				n -= m.chars() - utf8.RuneCountInString(note)
				out[i].Content, out[i].Tool = note, ""
			}
		}
	}
	return dropTurns(out, limit, turn)
}

// dropTurns drops whole earlier turns after the first prompt, oldest first,
// until msgs fit.
func dropTurns(msgs []msg, limit, turn int) []msg {
	keep := firstPrompt(msgs) + 1
	for total(msgs) > limit && keep < len(msgs) && msgs[keep].Turn < turn {
		t := msgs[keep].Turn
		end := keep
		for end < len(msgs) && msgs[end].Turn == t {
			end++
		}
		msgs = append(msgs[:keep:keep], msgs[end:]...)
	}
	return msgs
}

func firstPrompt(msgs []msg) int {
	for i, m := range msgs {
		if m.Role == "user" {
			return i
		}
	}
	return 0
}

// settle makes a loaded conversation one a request can carry: an answer
// whose tool calls lost their results (the supervisor died in between)
// gets a result saying so for each.
func settle(msgs []msg, turn int) []msg {
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "tool" {
			answered[m.CallID] = true
		}
	}
	var out []msg
	for _, m := range msgs {
		out = append(out, m)
		if m.Role != "assistant" {
			continue
		}
		for _, c := range m.Calls {
			if !answered[c.id] {
				out = append(out, msg{Role: "tool", CallID: c.id, Turn: turn,
					Content: `{"ok":false,"error":"the result of this call was lost when the turn was interrupted; check the lab status"}`})
				answered[c.id] = true
			}
		}
	}
	return out
}

// params is the conversation as chat-completions messages.
func params(msgs []msg) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case "system":
			out = append(out, openai.SystemMessage(m.Content))
		case "user":
			out = append(out, openai.UserMessage(m.Content))
		case "assistant":
			out = append(out, reply{text: m.Content, reasoning: m.Reasoning, calls: m.Calls}.param())
		case "tool":
			out = append(out, openai.ToolMessage(m.Content, m.CallID))
		}
	}
	return out
}
