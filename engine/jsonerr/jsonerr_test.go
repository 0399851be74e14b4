package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	type report struct {
		Task   string   `json:"task"`
		Checks []string `json:"checks"`
		N      int      `json:"n"`
	}
	tests := []struct{ name, data, want string }{
		{"empty", "  \n", "it is empty"},
		{"a bad literal", "nol", "not valid JSON at line 1, column 2 (byte 2)"},
		{"on the second line", "{\"task\": \"k\",\n \"n\": }", "not valid JSON at line 2, column 7 (byte 21)"},
		{"cut short", `{"task": "k"`, "the JSON ends before its value is complete"},
		{"a string field given a number", `{"task": 3}`, "task must be a string, not a JSON number"},
		{"an array field given a string", `{"checks": "x"}`, "checks must be an array, not a JSON string"},
		{"a whole number given a fraction", `{"n": 1.5}`, "n must be a whole number, not a JSON number 1.5"},
		{"not an object", `[1]`, "the value must be an object, not a JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r report
			err := json.Unmarshal([]byte(tt.data), &r)
			if err == nil {
				t.Fatalf("%q decoded", tt.data)
			}
			got := Problem([]byte(tt.data), err)
			if got != tt.want {
				t.Errorf("Problem(%q) = %q, want %q", tt.data, got, tt.want)
			}
			if strings.Contains(got, "invalid character") || strings.Contains(got, "Go value") {
				t.Errorf("decoder text reached the message: %q", got)
			}
		})
	}
}
