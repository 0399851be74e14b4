package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/simjecture/simjecture/provider"
)

// errTruncated is a stream that ended before its `data: [DONE]` line.
var errTruncated = errors.New("the response stream ended before [DONE]")

// requestFailure is a failed request, classified; RunTurn turns it into
// Outcome.Failure.
type requestFailure struct {
	failure *provider.Failure
}

func (e *requestFailure) Error() string {
	return e.failure.Category + ": " + e.failure.Message
}

var (
	modelMissing = regexp.MustCompile(`(?i)model.not.found|model_not_found|does.not.exist|unsupported.model|no such model|unknown model`)
)

// classify maps a failed request to a failure: the HTTP status first, then
// the text of a protocol error event through provider.Classify; network
// errors and truncated streams are transient. key is redacted from the
// message.
func classify(p *probe, err error, key string) *provider.Failure {
	if p.status >= 400 {
		return byStatus(p.status, string(p.errBody), key)
	}
	msg := redact(err.Error(), key)
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		f := provider.Classify(1, false, "", []string{msg})
		f.Message = excerpt(msg)
		return f
	}
	return &provider.Failure{Category: provider.CategoryTransient, Message: excerpt(msg)}
}

// byStatus classifies an HTTP error response from its status and body.
func byStatus(status int, body, key string) *provider.Failure {
	msg := excerpt(redact(fmt.Sprintf("HTTP %d %s: %s", status, http.StatusText(status), errorText(body)), key))
	cat := provider.StatusCategory(status, body)
	if cat == "" && modelMissing.MatchString(body) {
		cat = provider.CategoryPermission
	}
	if cat == "" {
		return &provider.Failure{Category: provider.Classify(1, false, "", []string{redact(body, key)}).Category, Message: msg}
	}
	return &provider.Failure{Category: cat, Message: msg}
}

// errorText is the message of an OpenAI-style error body, or the body.
func errorText(body string) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Type    string `json:"type"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			if c := codeOf(obj.Code, obj.Type); c != "" {
				return obj.Message + " (" + c + ")"
			}
			return obj.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return s
		}
	}
	return strings.TrimSpace(body)
}

func codeOf(code any, typ string) string {
	parts := []string{}
	if code != nil && fmt.Sprint(code) != "" {
		parts = append(parts, fmt.Sprint(code))
	}
	if typ != "" && (len(parts) == 0 || parts[0] != typ) {
		parts = append(parts, typ)
	}
	return strings.Join(parts, ", ")
}

// excerpt is one line of at most 300 characters.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
