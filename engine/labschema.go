package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Param is one argument of a lab call.
type Param struct {
	Name        string
	Type        string // string, integer, number, array, object
	Items       string // element type of an array: string or array (of strings)
	Enum        []string
	Required    bool
	Description string
	Properties  []Param // for objects
}

// CallSpec describes one lab call. The same table serves the command line,
// the MCP server and the API backend's function tools.
type CallSpec struct {
	Name        string
	Description string
	Params      []Param
}

var resourcesParams = []Param{
	{Name: "cpus", Type: "integer", Description: "CPU cores reserved (default 1)"},
	{Name: "memory_mb", Type: "integer", Description: "resident memory of the whole process tree, MiB (default 4096)"},
	{Name: "max_file_mb", Type: "integer", Description: "largest file the experiment may write, MiB (default 1024)"},
}

var challengeParams = []Param{
	{Name: "strategy", Type: "string", Required: true, Description: "how the claim was put to a harder test"},
	{Name: "experiments", Type: "array", Items: "string", Required: true, Description: "the challenge experiments (a subset of experiments)"},
	{Name: "outcome", Type: "string", Required: true, Description: "what the challenge showed"},
}

// LabCalls is the one schema of the lab protocol (contract section 5).
var LabCalls = []CallSpec{
	{Name: "run", Description: "Queue an experiment in the isolation backend; returns its receipt (status queued) at once.", Params: []Param{
		{Name: "source", Type: "string", Description: "program path under research/ (.py runs under python3, .sh under sh)"},
		{Name: "capability", Type: "string", Description: "capability name, instead of source"},
		{Name: "args", Type: "array", Items: "string", Description: "arguments"},
		{Name: "inputs", Type: "array", Items: "string", Description: "input paths under research/, copied into /work"},
		{Name: "outputs", Type: "array", Items: "string", Required: true, Description: "relative output paths to collect"},
		{Name: "timeout", Type: "number", Description: "wall-time limit in seconds (default 600)"},
		{Name: "key", Type: "string", Description: "distinguishes a deliberate replicate"},
		{Name: "stage", Type: "string", Enum: []string{"exploration", "evidence"}, Description: "default evidence"},
		{Name: "purpose", Type: "string", Description: "why this experiment is run"},
		{Name: "commitment", Type: "string", Description: "claim id, for repair evidence"},
		{Name: "resources", Type: "object", Properties: resourcesParams},
	}},
	{Name: "status", Description: "One experiment receipt, or the study snapshot.", Params: []Param{
		{Name: "experiment", Type: "string", Description: "experiment id (optional)"},
	}},
	{Name: "cancel", Description: "Cancel a queued or running experiment.", Params: []Param{
		{Name: "experiment", Type: "string", Required: true},
		{Name: "reason", Type: "string"},
	}},
	{Name: "commit", Description: "Commit a repair claim under root or another claim.", Params: []Param{
		{Name: "statement", Type: "string", Required: true},
		{Name: "parent", Type: "string", Description: "root (default) or a claim id"},
		{Name: "acceptance", Type: "string", Description: "the measurable acceptance criterion"},
		{Name: "rationale", Type: "string"},
		{Name: "source", Type: "string", Description: "program under research/ that tests it"},
		{Name: "cases", Type: "array", Items: "array", Description: "argument lists of the test cases"},
	}},
	{Name: "review", Description: "Ask the independent reviewer to accept a disposition of a claim.", Params: []Param{
		{Name: "claim", Type: "string", Description: "root (default) or a claim id"},
		{Name: "disposition", Type: "string", Required: true, Enum: []string{"supported", "falsified", "unresolved"}},
		{Name: "conclusion", Type: "string", Required: true},
		{Name: "experiments", Type: "array", Items: "string", Required: true},
		{Name: "challenge", Type: "object", Properties: challengeParams, Description: "required for supported"},
	}},
	{Name: "review_status", Description: "A review request, with the verdict once resolved.", Params: []Param{
		{Name: "review", Type: "string", Required: true},
	}},
	{Name: "note", Description: "Leave a short note in the study record.", Params: []Param{
		{Name: "statement", Type: "string", Required: true},
	}},
}

// FindCall returns the spec of a lab call.
func FindCall(name string) (CallSpec, bool) {
	for _, c := range LabCalls {
		if c.Name == name {
			return c, true
		}
	}
	return CallSpec{}, false
}

// CallNames lists the lab calls.
func CallNames() []string {
	names := make([]string, len(LabCalls))
	for i, c := range LabCalls {
		names[i] = c.Name
	}
	return names
}

// JSONSchema renders the call's arguments as a JSON Schema object.
func (c CallSpec) JSONSchema() map[string]any { return objectSchema(c.Params) }

func objectSchema(params []Param) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, p := range params {
		props[p.Name] = paramSchema(p)
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func paramSchema(p Param) map[string]any {
	s := map[string]any{"type": p.Type}
	if p.Description != "" {
		s["description"] = p.Description
	}
	if len(p.Enum) > 0 {
		s["enum"] = p.Enum
	}
	switch p.Type {
	case "array":
		item := map[string]any{"type": p.Items}
		if p.Items == "array" {
			item["items"] = map[string]any{"type": "string"}
		}
		s["items"] = item
	case "object":
		return mergeSchema(s, objectSchema(p.Properties))
	}
	return s
}

func mergeSchema(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// CheckArgs validates raw JSON arguments against the call's schema and
// returns a one-line error naming the first problem.
func (c CallSpec) CheckArgs(raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return fmt.Errorf("lab %s: NUL byte in input: %w", c.Name, ErrLab)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("lab %s: malformed JSON: %v: %w", c.Name, err, ErrLab)
	}
	if dec.More() {
		return fmt.Errorf("lab %s: malformed JSON: more than one value: %w", c.Name, ErrLab)
	}
	return checkObject(c.Name, "", c.Params, v)
}

func checkObject(call, prefix string, params []Param, v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("lab %s: %sarguments must be a JSON object: %w", call, prefix, ErrLab)
	}
	known := map[string]Param{}
	for _, p := range params {
		known[p.Name] = p
		if _, ok := obj[p.Name]; p.Required && !ok {
			return fmt.Errorf("lab %s: missing required argument %s%s: %w", call, prefix, p.Name, ErrLab)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := known[k]
		if !ok {
			return fmt.Errorf("lab %s: unknown argument %s%s: %w", call, prefix, k, ErrLab)
		}
		if err := checkValue(call, prefix+k, p, obj[k]); err != nil {
			return err
		}
	}
	return nil
}

func checkValue(call, name string, p Param, v any) error {
	bad := func(want string) error {
		return fmt.Errorf("lab %s: argument %s must be %s: %w", call, name, want, ErrLab)
	}
	switch p.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if strings.ContainsRune(s, 0) {
			return fmt.Errorf("lab %s: argument %s contains a NUL byte: %w", call, name, ErrLab)
		}
		if len(p.Enum) > 0 && !contains(p.Enum, s) {
			return bad("one of " + strings.Join(p.Enum, ", "))
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			return bad("a number")
		}
		if _, err := n.Int64(); p.Type == "integer" && err != nil {
			return bad("a whole number")
		}
	case "array":
		return checkArray(call, name, p, v)
	case "object":
		return checkObject(call, name+".", p.Properties, v)
	}
	return nil
}

func checkArray(call, name string, p Param, v any) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("lab %s: argument %s must be an array: %w", call, name, ErrLab)
	}
	for i, item := range arr {
		elem := Param{Type: p.Items, Items: "string"}
		if err := checkValue(call, fmt.Sprintf("%s[%d]", name, i), elem, item); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
