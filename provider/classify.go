package provider

import (
	"regexp"
	"strings"
)

// Failure categories.
const (
	CategoryTransient      = "transient"
	CategoryAuthentication = "authentication"
	CategoryQuota          = "quota"
	CategoryPermission     = "permission"
)

// Failure is a classified failed turn.
type Failure struct {
	Category string
	Message  string // a short excerpt for the operator, already redacted
}

// NeedsOperator reports whether the failure pauses the study for attention.
func (f *Failure) NeedsOperator() bool {
	return f != nil && f.Category != CategoryTransient
}

var categories = []struct {
	name string
	re   *regexp.Regexp
}{
	{CategoryAuthentication, regexp.MustCompile(`(?i)\b401\b|invalid.api.key|authentication.error|unauthorized`)},
	{CategoryQuota, regexp.MustCompile(`(?i)insufficient.quota|insufficient_quota|quota.exhausted|quota.exceeded|out.of.credits|credit.balance|insufficient.balance|payment.required|\b402\b|额度.*(?:用尽|耗尽)|余额不足`)},
	{CategoryPermission, regexp.MustCompile(`(?i)\b403\b|permission.denied|access.denied|model.not.found|model_not_found|unsupported.model`)},
}

// Attention is the operator message for each category that needs one.
var Attention = map[string]string{
	CategoryAuthentication: "Authentication with the provider failed. Fix the credentials, then resume this study.",
	CategoryQuota:          "The provider reports exhausted quota or credit. Restore credit, then resume this study.",
	CategoryPermission:     "The provider denied access or does not know the model. Fix the account or model configuration, then resume this study.",
}

// Classify decides what a turn's failure is, from its exit status, the tail
// of its stderr and its protocol error events only. A zero exit or a turn
// cut at its allowance with no error event is success (nil).
func Classify(exitCode int, timedOut bool, stderrTail string, errorEvents []string) *Failure {
	if len(errorEvents) == 0 && (exitCode == 0 || timedOut) {
		return nil
	}
	text := strings.Join(append([]string{tail(stderrTail, 8000)}, errorEvents...), "\n")
	msg := excerpt(text)
	for _, c := range categories {
		if c.re.MatchString(text) {
			return &Failure{Category: c.name, Message: msg}
		}
	}
	return &Failure{Category: CategoryTransient, Message: msg}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 && len(s)-i > 2 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[len(s)-300:]
	}
	return s
}
