package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestParseEvidencePath(t *testing.T) {
	cases := []struct {
		path string
		want []string // nil: refused
		err  string
	}{
		{"a", []string{"a"}, ""},
		{"$.a", []string{"a"}, ""},
		{"a.b-c.D_9", []string{"a", "b-c", "D_9"}, ""},
		{"a[0].b", []string{"a", "0", "b"}, ""},
		{"a.0.b", []string{"a", "0", "b"}, ""},
		{"$.a[0].b", []string{"a", "0", "b"}, ""},
		{"a[10][2]", []string{"a", "10", "2"}, ""},
		{"0", []string{"0"}, ""},
		{"", nil, "empty key"},
		{"$", nil, "empty key"},
		{"$.", nil, "empty key"},
		{"$$.a", nil, "empty key"},
		{".a", nil, "empty key"},
		{"a.", nil, "empty key"},
		{"a..b", nil, "empty key"},
		{"[0]", nil, "empty key"},
		{"$.[0]", nil, "empty key"},
		{"a[*]", nil, "not a non-negative index"},
		{"a.*", nil, "empty key"},
		{"a[-1]", nil, "not a non-negative index"},
		{"a[01]", nil, "leading zeros"},
		{"a[1:2]", nil, "not a non-negative index"},
		{"a[", nil, "unclosed"},
		{"a[]", nil, "not a non-negative index"},
		{"a[?(@.x)]", nil, "not a non-negative index"},
		{"a b", nil, "unexpected"},
		{"a['b']", nil, "not a non-negative index"},
		{"$..a", nil, "empty key"},
		{"a/b", nil, "unexpected"},
		{strings.Repeat("a", MaxPathLen+1), nil, "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			got, err := ParseEvidencePath(tc.path)
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want an error containing %q, got %v (%v)", tc.err, err, got)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

func decodeDoc(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEvidencePathLookup(t *testing.T) {
	doc := decodeDoc(t, `{"a":[{"b":25},{"b":true}],"o":{"0":"zero"},"n":null,"arr":[1,[2]],"s":"x"}`)
	cases := []struct{ path, want, err string }{
		{"a[0].b", "25", ""},
		{"a.1.b", "true", ""},
		{"o.0", `"zero"`, ""},
		{"o[0]", `"zero"`, ""},
		{"n", "null", ""},
		{"arr[1][0]", "2", ""},
		{"a[2].b", "", "missing at $.a.2"},
		{"a.x", "", "missing at $.a.x"},
		{"s.0", "", "missing"},
		{"nope", "", "missing"},
		{"a", "", "not a scalar (an array)"},
		{"o", "", "not a scalar (an object)"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			p, err := ParseEvidencePath(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Lookup(doc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want error %q, got %v (%s)", tc.err, err, got)
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

func TestScalarEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"25", "25.0", true},
		{"25", "2.5e1", true},
		{"0.1", "0.10", true},
		{"-0", "0", true},
		{"1", "true", false},
		{"0", "false", false},
		{"true", "true", true},
		{"true", "false", false},
		{`"1"`, "1", false},
		{`"a"`, `"a"`, true},
		{`"a"`, `"A"`, false},
		{"null", "null", true},
		{"null", "0", false},
		{"null", `""`, false},
		{"null", "false", false},
		{"9007199254740993", "9007199254740992", false},
		{"1e400", "1e400", true},
	}
	for _, tc := range cases {
		t.Run(tc.a+"="+tc.b, func(t *testing.T) {
			var a, b Scalar
			if err := json.Unmarshal([]byte(tc.a), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.b), &b); err != nil {
				t.Fatal(err)
			}
			if a.Equal(b) != tc.want || b.Equal(a) != tc.want {
				t.Fatalf("%s == %s: got %v, want %v", tc.a, tc.b, a.Equal(b), tc.want)
			}
		})
	}
	for _, bad := range []string{"[1]", `{"a":1}`} {
		var s Scalar
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s accepted as a scalar", bad)
		}
	}
}

// FuzzParseEvidencePath: no input panics; an accepted path has only key
// characters in its steps and its canonical form parses to the same steps.
func FuzzParseEvidencePath(f *testing.F) {
	for _, s := range []string{"a", "$.a[0].b", "a.0.b", "a[01]", "a[*]", "$..a", "a[", "[0]", "a.b-c_D", "$.", "a[999999999]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseEvidencePath(s)
		if err != nil {
			return
		}
		for _, step := range p {
			if step == "" || strings.ContainsAny(step, ".[]$*") {
				t.Fatalf("%q gave step %q", s, step)
			}
		}
		again, err := ParseEvidencePath(p.String())
		if err != nil || !slices.Equal(again, p) {
			t.Fatalf("%q: canonical %q parses to %v (%v)", s, p, again, err)
		}
	})
}

// FuzzScalarEqual: equality of decoded scalars is reflexive and symmetric.
func FuzzScalarEqual(f *testing.F) {
	for _, pair := range [][2]string{{"25", "25.0"}, {"1", "true"}, {"null", "null"}, {`"a"`, `"a"`}, {"1e400", "-1e-400"}} {
		f.Add(pair[0], pair[1])
	}
	f.Fuzz(func(t *testing.T, x, y string) {
		var a, b Scalar
		if json.Unmarshal([]byte(x), &a) != nil || json.Unmarshal([]byte(y), &b) != nil {
			return
		}
		if !a.Equal(a) || a.Equal(b) != b.Equal(a) {
			t.Fatalf("%s, %s: reflexive %v, %v vs %v", x, y, a.Equal(a), a.Equal(b), b.Equal(a))
		}
		if bytes.Equal([]byte(a.String()), []byte(b.String())) && !a.Equal(b) {
			t.Fatalf("%s and %s encode alike but differ", x, y)
		}
	})
}
