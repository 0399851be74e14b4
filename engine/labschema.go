package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/simjecture/simjecture/engine/jsonerr"
)

// Param is one argument of a lab call.
type Param struct {
	Name        string
	Type        string // string, integer, number, boolean, scalar (any of those or null), array, object
	Items       string // element type of an array: string, array (of strings) or object (of Properties)
	Enum        []string
	Required    bool
	Description string
	Properties  []Param // for objects
}

// CallSpec describes one lab call: its schema and, side by side, its
// handler. The same table (see [Calls]) serves the command line, the MCP
// server, the API backend's function tools and the worker's prompt.
type CallSpec struct {
	Name        string
	Description string
	Params      []Param
	Wakes       bool   // hands the executor work: wake the supervisor after it succeeds
	Writes      bool   // changes the record: refused on an ended study or a bundled record (Lab.Call)
	Roles       []Role // who may make it (engine/roles.go); the guide, MCP and api tools of a role list only its calls
	handler     callHandler
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
	if p.Type == "scalar" {
		s["type"] = []string{"string", "number", "boolean", "null"}
	}
	if p.Description != "" {
		s["description"] = p.Description
	}
	if len(p.Enum) > 0 {
		s["enum"] = p.Enum
	}
	switch p.Type {
	case "array":
		item := map[string]any{"type": p.Items}
		switch p.Items {
		case "array":
			item["items"] = map[string]any{"type": "string"}
		case "object":
			item = objectSchema(p.Properties)
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
		return fmt.Errorf("lab %s: stdin is not a JSON object: %s: %w", c.Name, jsonerr.Problem(raw, err), ErrLab)
	}
	if dec.More() {
		return fmt.Errorf("lab %s: stdin is not a JSON object: more than one value: %w", c.Name, ErrLab)
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
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
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
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
	case "scalar":
		switch v.(type) {
		case nil, bool, string, json.Number:
		default:
			return bad("a string, number, boolean or null")
		}
	case "array":
		return checkArray(call, name, p, v)
	case "object":
		return checkObject(call, name+".", p.Properties, v)
	default:
		return fmt.Errorf("lab %s: argument %s has unknown schema type %q: %w", call, name, p.Type, ErrLab)
	}
	return nil
}

func checkArray(call, name string, p Param, v any) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("lab %s: argument %s must be an array: %w", call, name, ErrLab)
	}
	for i, item := range arr {
		elem := Param{Type: p.Items, Items: "string", Properties: p.Properties}
		if err := checkValue(call, fmt.Sprintf("%s[%d]", name, i), elem, item); err != nil {
			return err
		}
	}
	return nil
}
