package claude

import (
	"github.com/simjecture/simjecture/provider"
)

// typeCategories maps the API's error types to failure categories, for an
// error event without a status that decides.
var typeCategories = map[string]string{
	"authentication_error": provider.CategoryAuthentication,
	"billing_error":        provider.CategoryQuota,
	"permission_error":     provider.CategoryPermission,
	"not_found_error":      provider.CategoryPermission,
	"rate_limit_error":     provider.CategoryTransient,
	"overloaded_error":     provider.CategoryTransient,
	"api_error":            provider.CategoryTransient,
}

// failure classifies the run from its exit status, stderr and the stream's
// error events, never the model's text. The last error event decides (the
// one that ended the run): its HTTP status, else its error type; anything
// else goes through provider.Classify (stderr and the events' words), where
// a dropped stream or a crash is transient. A run that succeeded with no
// error event is nil.
func (s *stream) failure(out provider.Outcome) *provider.Failure {
	s.mu.Lock()
	errs := append([]apiError(nil), s.errors...)
	s.mu.Unlock()
	words := make([]string, len(errs))
	for i, e := range errs {
		words[i] = e.String()
	}
	f := provider.Classify(out.ExitCode, out.TimedOut, out.StderrTail, words)
	if f == nil || len(errs) == 0 {
		return f
	}
	last := errs[len(errs)-1]
	if c := provider.StatusCategory(last.Status, last.Message); c != "" {
		f.Category = c
	} else if c, ok := typeCategories[last.Type]; ok {
		f.Category = c
	}
	return f
}
