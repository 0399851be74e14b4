package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// This file is the machine check of an evidence contract (contract section
// 12): the path grammar ^($.)?key(.key|[N])*$ and the scalar comparison.
// There is no wildcard, slice, negative index, expression or "..".

// MaxPathLen is the longest check path accepted.
const MaxPathLen = 1024

// EvidencePath is a parsed check path: one key per step. A step that came
// from [N] or a numeric key indexes an array and names a key of an object,
// so a.0.b, a[0].b and $.a[0].b are the same path.
type EvidencePath []string

// ParseEvidencePath parses a check path, or says what is wrong with it.
func ParseEvidencePath(s string) (EvidencePath, error) {
	if len(s) > MaxPathLen {
		return nil, fmt.Errorf("path is longer than %d characters: %w", MaxPathLen, ErrLab)
	}
	rest := strings.TrimPrefix(s, "$.")
	var p EvidencePath
	for first := true; first || rest != ""; first = false {
		step, tail, err := nextStep(rest, first)
		if err != nil {
			return nil, fmt.Errorf("path %q: %v: %w", s, err, ErrLab)
		}
		p, rest = append(p, step), tail
	}
	return p, nil
}

// nextStep reads one step: a bare key first, then .key or [N].
func nextStep(s string, first bool) (step, rest string, err error) {
	switch {
	case first:
		return readKey(s)
	case strings.HasPrefix(s, "."):
		return readKey(s[1:])
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", fmt.Errorf("unclosed [")
		}
		if !isIndex(s[1:end]) {
			return "", "", fmt.Errorf("[%s] is not a non-negative index without leading zeros", s[1:end])
		}
		return s[1:end], s[end+1:], nil
	}
	return "", "", fmt.Errorf("unexpected %q (want .key or [N])", s[:1])
}

func readKey(s string) (key, rest string, err error) {
	n := 0
	for n < len(s) && isKeyByte(s[n]) {
		n++
	}
	if n == 0 {
		return "", "", fmt.Errorf("empty key (keys are letters, digits, _ and -)")
	}
	return s[:n], s[n:], nil
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isIndex reports whether s is a non-negative integer without leading zeros.
func isIndex(s string) bool {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String is the path in its canonical form, $.a.0.b.
func (p EvidencePath) String() string { return "$." + strings.Join(p, ".") }

// Lookup follows the path through a JSON document decoded with UseNumber
// and returns the scalar at its end.
func (p EvidencePath) Lookup(doc any) (Scalar, error) {
	v := doc
	for i, step := range p {
		next, ok := child(v, step)
		if !ok {
			return Scalar{}, fmt.Errorf("JSON path %s is missing at %s", p, EvidencePath(p[:i+1]))
		}
		v = next
	}
	return scalarOf(v)
}

func child(v any, step string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		x, ok := c[step]
		return x, ok
	case []any:
		if !isIndex(step) {
			return nil, false
		}
		i, err := strconv.Atoi(step)
		if err != nil || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// Scalar is a JSON string, number, boolean or null: the expected value of a
// check. It keeps a number's text, so no precision is lost before comparing.
type Scalar struct{ v any } // nil, bool, string or json.Number

func scalarOf(v any) (Scalar, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return Scalar{x}, nil
	case json.Number:
		if _, err := finite(x); err != nil {
			return Scalar{}, err
		}
		return Scalar{x}, nil
	}
	return Scalar{}, fmt.Errorf("value is not a scalar (%s)", jsonKind(v))
}

func jsonKind(v any) string {
	if _, ok := v.([]any); ok {
		return "an array"
	}
	return "an object"
}

func finite(n json.Number) (*big.Float, error) {
	f, _, err := big.ParseFloat(string(n), 10, 256, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return nil, fmt.Errorf("number %s is not finite", n)
	}
	return f, nil
}

// UnmarshalJSON accepts only a scalar.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	out, err := scalarOf(v)
	if err != nil {
		return err
	}
	*s = out
	return nil
}

// MarshalJSON writes the scalar as it was given.
func (s Scalar) MarshalJSON() ([]byte, error) { return json.Marshal(s.v) }

// Equal compares two scalars: numbers numerically (25 equals 25.0),
// booleans only with booleans, strings with strings, null with null.
func (s Scalar) Equal(o Scalar) bool {
	switch a := s.v.(type) {
	case nil:
		return o.v == nil
	case bool:
		b, ok := o.v.(bool)
		return ok && a == b
	case string:
		b, ok := o.v.(string)
		return ok && a == b
	case json.Number:
		b, ok := o.v.(json.Number)
		if !ok {
			return false
		}
		x, err1 := finite(a)
		y, err2 := finite(b)
		return err1 == nil && err2 == nil && x.Cmp(y) == 0
	}
	return false
}

// String is the scalar's JSON text.
func (s Scalar) String() string {
	b, _ := json.Marshal(s.v)
	return string(b)
}
