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

// usageLimit matches a 429 that is exhausted quota or a usage limit rather
// than a rate limit.
var usageLimit = regexp.MustCompile(`(?i)insufficient.quota|insufficient_quota|quota.exhausted|quota.exceeded|out.of.credits|credit.balance|insufficient.balance|usage.limit`)

// StatusCategory is the failure category of a model API's HTTP error
// status, given the error's own message (never the model's text): 401
// authentication, 402 quota, 403 and 404 (an unknown model or endpoint)
// permission, 429 quota when the message says credit or a usage limit ran
// out and transient otherwise, 408 and 5xx (529 overloaded included)
// transient. It is "" for a status that does not decide alone.
func StatusCategory(status int, message string) string {
	switch {
	case status == 401:
		return CategoryAuthentication
	case status == 402:
		return CategoryQuota
	case status == 403, status == 404:
		return CategoryPermission
	case status == 429 && usageLimit.MatchString(message):
		return CategoryQuota
	case status == 429, status == 408, status >= 500:
		return CategoryTransient
	}
	return ""
}
