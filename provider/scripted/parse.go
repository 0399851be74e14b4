package scripted

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DefaultMetric is the artifact field a criterion refers to when its text
// names no field.
const DefaultMetric = "max_rel_energy_error"

// Criterion is a numerical acceptance criterion: Metric <= Threshold, or
// Metric < Threshold when Strict.
type Criterion struct {
	Metric    string
	Threshold float64
	Strict    bool
}

// Satisfied reports whether a measured value meets the criterion.
func (c Criterion) Satisfied(v float64) bool {
	if c.Strict {
		return v < c.Threshold
	}
	return v <= c.Threshold
}

// String renders the criterion as an acceptance expression.
func (c Criterion) String() string {
	op := "<="
	if c.Strict {
		op = "<"
	}
	return fmt.Sprintf("%s %s %s", c.Metric, op, formatNum(c.Threshold))
}

const numPat = `((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)`
const pctPat = `\s*(%|percent\b|per\s*cent\b)?`

var (
	cmpRe    = regexp.MustCompile(`(?i)(?:([a-z][a-z0-9_]*)\s*)?(<=|=<|≤|<)\s*` + numPat + pctPat)
	withinRe = regexp.MustCompile(`(?i)\b(within|at most|no more than|below|under|less than)\s+` + numPat + pctPat)
	pctRe    = regexp.MustCompile(`(?i)` + numPat + `\s*(%|percent\b|per\s*cent\b)`)
	eRe      = regexp.MustCompile(`(?i)(?:\be\s*=\s*|eccentricity\s*(?:of\s+|=\s*)?)` + numPat)
	orbitsRe = regexp.MustCompile(`(?i)` + numPat + `\s+orbits?\b`)
	stepsRe  = regexp.MustCompile(`(?i)` + numPat + `\s+(?:time\s*)?steps?\s+(?:per|an|each|every)\s+orbit`)
	fieldRe  = regexp.MustCompile(`^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$`)
)

// ParseCriterion returns the criterion of the first text that names a
// threshold: an explicit comparison ("max_rel_energy_error <= 0.01"), a
// bound in words ("within 1 %"), or a bare percentage ("1 percent").
func ParseCriterion(texts ...string) (Criterion, error) {
	for _, t := range texts {
		if c, ok := parseCriterion(t); ok {
			return c, nil
		}
	}
	return Criterion{}, ErrNoThreshold
}

// parseCriterion tries the three forms on one text, most explicit first.
func parseCriterion(text string) (Criterion, bool) {
	if m := cmpRe.FindStringSubmatch(text); m != nil {
		c := Criterion{Metric: DefaultMetric, Strict: m[2] == "<"}
		if fieldRe.MatchString(strings.ToLower(m[1])) {
			c.Metric = strings.ToLower(m[1])
		}
		return withValue(c, m[3], m[4])
	}
	if m := withinRe.FindStringSubmatch(text); m != nil {
		word := strings.ToLower(m[1])
		c := Criterion{Metric: DefaultMetric, Strict: word == "below" || word == "under" || word == "less than"}
		return withValue(c, m[2], m[3])
	}
	if m := pctRe.FindStringSubmatch(text); m != nil {
		return withValue(Criterion{Metric: DefaultMetric}, m[1], m[2])
	}
	return Criterion{}, false
}

// withValue sets the threshold from a number and an optional percent sign.
func withValue(c Criterion, num, pct string) (Criterion, bool) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) {
		return Criterion{}, false
	}
	if pct != "" {
		v /= 100
	}
	c.Threshold = v
	return c, true
}

// orbitCase is the simulated case a claim states or a run measured; a nil
// field is unknown.
type orbitCase struct {
	Methods       []string
	E             *float64
	Orbits        *float64
	StepsPerOrbit *float64
}

// methodAliases maps words of a statement to the integrator kepler.py names.
var methodAliases = []struct{ word, method string }{
	{"euler", "euler"},
	{"leapfrog", "leapfrog"},
	{"verlet", "leapfrog"},
	{"symplectic", "leapfrog"},
}

// statedCase parses the case from a statement; missing parameters (never the
// method) are taken from the ancestors' statements, nearest first.
func statedCase(statement string, ancestors ...string) orbitCase {
	c := orbitCase{Methods: statedMethods(statement)}
	for _, text := range append([]string{statement}, ancestors...) {
		fill(&c.E, eRe, text)
		fill(&c.Orbits, orbitsRe, text)
		fill(&c.StepsPerOrbit, stepsRe, text)
	}
	return c
}

// statedMethods lists the integrators a text names.
func statedMethods(text string) []string {
	lower := strings.ToLower(text)
	var out []string
	for _, a := range methodAliases {
		if strings.Contains(lower, a.word) && !slices.Contains(out, a.method) {
			out = append(out, a.method)
		}
	}
	return out
}

// fill sets *dst from the first match of re in text unless already set.
func fill(dst **float64, re *regexp.Regexp, text string) {
	if *dst != nil {
		return
	}
	if m := re.FindStringSubmatch(text); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			*dst = &v
		}
	}
}

// sameNum compares two parameters with a small relative tolerance.
func sameNum(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// formatNum renders a figure compactly and without loss for quoting.
func formatNum(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// percent renders a fraction as a percentage ("0.01" -> "1 %").
func percent(v float64) string {
	return strconv.FormatFloat(v*100, 'g', 6, 64) + " %"
}
