package provider

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct {
		name     string
		exit     int
		timedOut bool
		stderr   string
		events   []string
		want     string // "" = not a failure
	}{
		{"clean exit", 0, false, "", nil, ""},
		{"turn cut at its allowance", 137, true, "killed", nil, ""},
		{"agent prose is not read", 0, false, "", nil, ""},
		{"rate limit", 1, false, "HTTP 429 rate limit", nil, CategoryTransient},
		{"overloaded", 1, false, "503 Service Unavailable: overloaded", nil, CategoryTransient},
		{"stream cut", 0, false, "", []string{"stream disconnected before completion"}, CategoryTransient},
		{"invalid key", 1, false, "401 invalid API key", nil, CategoryAuthentication},
		{"balance in an event with exit 0", 0, false, "", []string{"Error code: 402 - Insufficient Balance"}, CategoryQuota},
		{"429 insufficient_quota", 1, false, `429 {"error":{"code":"insufficient_quota"}}`, nil, CategoryQuota},
		{"chinese balance", 1, false, "余额不足", nil, CategoryQuota},
		{"access denied", 1, false, "403 access denied", nil, CategoryPermission},
		{"model not found", 1, false, "model not found: gpt-x", nil, CategoryPermission},
		{"crash", 2, false, "panic: nil map", nil, CategoryTransient},
	}
	for _, tc := range cases {
		f := Classify(tc.exit, tc.timedOut, tc.stderr, tc.events)
		got := ""
		if f != nil {
			got = f.Category
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if f != nil && f.NeedsOperator() != (tc.want != CategoryTransient) {
			t.Errorf("%s: NeedsOperator = %v", tc.name, f.NeedsOperator())
		}
	}
}

// TestStatusCategory: what a model API's HTTP status says alone, and a
// 429 whose own message says credit or a usage limit ran out.
func TestStatusCategory(t *testing.T) {
	cases := []struct {
		status  int
		message string
		want    string
	}{
		{401, "", CategoryAuthentication},
		{402, "", CategoryQuota},
		{403, "", CategoryPermission},
		{404, "model: no-such-model", CategoryPermission},
		{429, "rate limited", CategoryTransient},
		{429, "Claude usage limit reached", CategoryQuota},
		{429, `{"code":"insufficient_quota"}`, CategoryQuota},
		{408, "", CategoryTransient},
		{500, "", CategoryTransient},
		{529, "invalid api key", CategoryTransient},
		{400, "bad request", ""},
		{0, "", ""},
	}
	for _, tc := range cases {
		if got := StatusCategory(tc.status, tc.message); got != tc.want {
			t.Errorf("StatusCategory(%d, %q) = %q, want %q", tc.status, tc.message, got, tc.want)
		}
	}
}
