package api

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/simjecture/simjecture/provider"
)

// maxTail is how much of the model's text an Outcome keeps.
const maxTail = 64 << 10

// turnRun collects what one turn produced.
type turnRun struct {
	log       *transcript
	requests  int
	said      strings.Builder // every answer text of the turn, for the tail
	final     string          // the last answer text
	in, out   *int64          // usage summed over the turn's requests; nil when no request reported any
	toolCalls int             // tool calls a tool-free turn asked for anyway
}

// addUsage adds one request's usage; unknown stays unknown.
func (r *turnRun) addUsage(u *openai.CompletionUsage) {
	if u == nil {
		return
	}
	if r.in == nil {
		r.in, r.out = new(int64), new(int64)
	}
	*r.in += u.PromptTokens
	*r.out += u.CompletionTokens
}

// answer records an assistant text.
func (r *turnRun) answer(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	r.final = text
	r.log.say(text)
	r.said.WriteString(text)
	r.said.WriteByte('\n')
	if r.said.Len() > 2*maxTail {
		s := r.said.String()
		r.said.Reset()
		r.said.WriteString(s[len(s)-maxTail:])
	}
}

func (r *turnRun) tail() string {
	s := r.said.String()
	if len(s) > maxTail {
		s = s[len(s)-maxTail:]
	}
	return s
}

// verdictLine is the reviewer's verdict as one line: the last fenced block
// or the whole answer when it is one JSON object (compacted), else the
// answer's last line.
func verdictLine(text string) string {
	for _, cand := range []string{lastFence(text), strings.TrimSpace(text)} {
		if obj, ok := compactObject(cand); ok {
			return obj
		}
	}
	return provider.LastLine(text)
}

// lastFence is the content of the last ``` fenced block, or "".
func lastFence(text string) string {
	end := strings.LastIndex(text, "```")
	if end < 0 {
		return ""
	}
	start := strings.LastIndex(text[:end], "```")
	if start < 0 {
		return ""
	}
	body := text[start+3 : end]
	if i := strings.IndexByte(body, '\n'); i >= 0 && !strings.Contains(body[:i], "{") {
		body = body[i+1:] // drop the info string (json)
	}
	return strings.TrimSpace(body)
}

func compactObject(s string) (string, bool) {
	if !strings.HasPrefix(s, "{") {
		return "", false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) != nil {
		return "", false
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return "", false
	}
	return b.String(), true
}
