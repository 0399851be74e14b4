package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// schemaKinds are the Go kinds a JSON field may have for each scalar schema type.
var schemaKinds = map[string][]reflect.Kind{
	"string":  {reflect.String},
	"integer": {reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64},
	"number":  {reflect.Float32, reflect.Float64},
	"boolean": {reflect.Bool},
	"scalar":  {reflect.Struct}, // engine.Scalar
}

// paramMismatches compares a call's params with the JSON fields of its
// argument type, both ways and recursively, and lists every difference.
func paramMismatches(where string, params []Param, typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return []string{fmt.Sprintf("%s: %s is not a struct", where, typ)}
	}
	fields, problems := jsonFields(where, typ)
	for _, p := range params {
		f, ok := fields[p.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: param %s is no JSON field of %s", where, p.Name, typ))
			continue
		}
		delete(fields, p.Name)
		problems = append(problems, typeMismatches(where+"."+p.Name, p, f)...)
	}
	for name := range fields {
		problems = append(problems, fmt.Sprintf("%s: JSON field %s of %s is no param", where, name, typ))
	}
	slices.Sort(problems)
	return problems
}

func jsonFields(where string, typ reflect.Type) (map[string]reflect.Type, []string) {
	fields := map[string]reflect.Type{}
	var problems []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous:
			problems = append(problems, fmt.Sprintf("%s: embedded field %s is not supported", where, f.Name))
		case !f.IsExported() || name == "-":
		case name == "":
			fields[f.Name] = f.Type
		default:
			fields[name] = f.Type
		}
	}
	return fields, problems
}

func typeMismatches(where string, p Param, f reflect.Type) []string {
	for f.Kind() == reflect.Pointer {
		f = f.Elem()
	}
	if len(p.Enum) > 0 && p.Type != "string" {
		return []string{fmt.Sprintf("%s: enum on a %s", where, p.Type)}
	}
	switch p.Type {
	case "object":
		return paramMismatches(where, p.Properties, f)
	case "array":
		if f.Kind() != reflect.Slice {
			return []string{fmt.Sprintf("%s: array param, %s field", where, f)}
		}
		return typeMismatches(where+"[]", Param{Type: p.Items, Items: "string", Properties: p.Properties}, f.Elem())
	}
	kinds, ok := schemaKinds[p.Type]
	if !ok {
		return []string{fmt.Sprintf("%s: unknown schema type %q", where, p.Type)}
	}
	if !slices.Contains(kinds, f.Kind()) {
		return []string{fmt.Sprintf("%s: %s param, %s field", where, p.Type, f)}
	}
	return nil
}

func TestLabCallParamsAreTheArgumentFields(t *testing.T) {
	for _, c := range labCalls {
		t.Run(c.Name, func(t *testing.T) {
			if c.handler.args == nil {
				t.Fatal("no handler, so no argument type")
			}
			for _, p := range paramMismatches(c.Name, c.Params, c.handler.args) {
				t.Error(p)
			}
		})
	}
}

// TestParamMismatchesFindsEachKind proves the check above can fail.
func TestParamMismatchesFindsEachKind(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type args struct {
		S     string     `json:"s"`
		F     *float64   `json:"f"`
		L     [][]string `json:"l"`
		B     bool       `json:"b"`
		In    *inner     `json:"in"`
		Extra string     `json:"extra"`
	}
	good := []Param{{Name: "s", Type: "string", Enum: []string{"x"}}, {Name: "f", Type: "number"}, {Name: "l", Type: "array", Items: "array"},
		{Name: "b", Type: "boolean"}, {Name: "in", Type: "object", Properties: []Param{{Name: "n", Type: "integer"}}}, {Name: "extra", Type: "string"}}
	edit := func(i int, p Param) []Param {
		ps := slices.Clone(good)
		ps[i] = p
		return ps
	}
	cases := []struct {
		name   string
		params []Param
		want   string // "" for no mismatch
	}{
		{"matching", good, ""},
		{"field without param", good[:5], "JSON field extra of engine.args is no param"},
		{"param without field", append(slices.Clone(good), Param{Name: "ghost", Type: "string"}), "param ghost is no JSON field"},
		{"wrong scalar type", edit(1, Param{Name: "f", Type: "integer"}), "x.f: integer param, float64 field"},
		{"wrong element type", edit(2, Param{Name: "l", Type: "array", Items: "string"}), "x.l[]: string param, []string field"},
		{"enum on a number", edit(1, Param{Name: "f", Type: "number", Enum: []string{"1"}}), "enum on a number"},
		{"unknown type", edit(3, Param{Name: "b", Type: "bool"}), `unknown schema type "bool"`},
		{"nested field without param", edit(4, Param{Name: "in", Type: "object"}), "x.in: JSON field n of engine.inner is no param"},
		{"nested wrong type", edit(4, Param{Name: "in", Type: "object", Properties: []Param{{Name: "n", Type: "string"}}}), "x.in.n: string param, int field"},
		{"object for a scalar", edit(0, Param{Name: "s", Type: "object"}), "x.s: string is not a struct"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(paramMismatches("x", tc.params, reflect.TypeFor[args]()), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("mismatches:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}

func TestLabCallsAreWired(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Calls() {
		switch {
		case c.Name == "" || seen[c.Name] && c.Name != "review": // review has minimal's row and the scientific one
			t.Errorf("call name %q is empty or repeated", c.Name)
		case strings.TrimSpace(c.Description) == "":
			t.Errorf("%s: no description", c.Name)
		case c.handler.run == nil || c.handler.args == nil:
			t.Errorf("%s: no handler", c.Name)
		}
		seen[c.Name] = true
	}
	var want []string
	for _, c := range Calls() {
		if !slices.Contains(want, c.Name) {
			want = append(want, c.Name)
		}
	}
	if names := CallNames(); !slices.Equal(names, want) {
		t.Errorf("CallNames() = %v, not the table's names in order (%v)", names, want)
	}
}

// dispatchStep is one lab call of a study and the check that only the
// call's own handler passes.
type dispatchStep struct {
	call  string
	args  func() string
	check func(t *testing.T, got any)
}

func TestLabCallDispatchesEachNameToItsOwnHandler(t *testing.T) {
	covered := dispatchAll(t, func(lab *Lab, steps []dispatchStep) []string { return runDispatchSteps(t, lab, steps) })
	slices.Sort(covered)
	if names := CallNames(); !sameSet(slices.Compact(covered), names) {
		t.Errorf("steps cover %v, the table has %v: add a step for a new call", covered, names)
	}
}

// dispatchAll runs do on a minimal study (sim.py under research/) with
// minimal's steps, then on a structured one with the ledger's, and returns
// what both runs returned.
func dispatchAll[T any](t *testing.T, do func(*Lab, []dispatchStep) []T) []T {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	out := do(&Lab{C: c, S: s, Cores: 2, MemMB: 8192}, minimalDispatchSteps())
	_, _, slab := newScientificStudy(t, "structured")
	return append(out, do(slab, ledgerDispatchSteps(t, slab))...)
}

// minimalDispatchSteps are the calls of a minimal study (with sim.py under
// research/), each with arguments it takes, in an order in which each
// succeeds.
func minimalDispatchSteps() []dispatchStep {
	var exp, rev string
	return []dispatchStep{
		{"run", func() string { return `{"source":"sim.py","outputs":["o.txt"]}` }, func(t *testing.T, got any) {
			r := as[Receipt](t, got)
			if exp = r.ID; r.Status != ExpQueued || !strings.HasPrefix(exp, "exp_") {
				t.Fatalf("run gave %s %s, want a queued exp_ receipt", r.ID, r.Status)
			}
		}},
		{"status", func() string { return fmt.Sprintf(`{"experiment":%q}`, exp) }, func(t *testing.T, got any) {
			if r := as[StatusResult](t, got); r.Receipt == nil || r.Receipt.ID != exp || r.Receipt.Status != ExpQueued {
				t.Fatalf("status gave %+v, want the queued receipt %s", r, exp)
			}
		}},
		{"notes", func() string { return `{"kind":"question"}` }, func(t *testing.T, got any) {
			if p := as[NotesPage](t, got); p.Total != 0 || p.Limit != defaultPage {
				t.Fatalf("notes gave %+v, want an empty page of %d", p, defaultPage)
			}
		}},
		{"brief", func() string { return `{"max_bytes":4096}` }, func(t *testing.T, got any) {
			if b := as[Brief](t, got); b.LatestExperiment == nil || b.LatestExperiment.ID != exp {
				t.Fatalf("brief gave %+v, want %s as the latest experiment", b.LatestExperiment, exp)
			}
		}},
		{"commit", func() string { return `{"statement":"a repair"}` }, func(t *testing.T, got any) {
			if cl := as[Claim](t, got); cl.Status != ClaimOpen || cl.Statement != "a repair" {
				t.Fatalf("commit gave %+v", cl)
			}
		}},
		{"review", func() string {
			return fmt.Sprintf(`{"disposition":"falsified","conclusion":"it fails","experiments":[%q]}`, exp)
		}, func(t *testing.T, got any) {
			r := as[Review](t, got)
			if rev = r.ID; r.Status != "queued" || r.Claim != RootClaim {
				t.Fatalf("review gave %+v", r)
			}
		}},
		{"review_status", func() string { return fmt.Sprintf(`{"review":%q}`, rev) }, func(t *testing.T, got any) {
			if r := as[Review](t, got); r.ID != rev {
				t.Fatalf("review_status gave %s, want %s", r.ID, rev)
			}
		}},
		{"note", func() string { return fmt.Sprintf(`{"statement":"a note","experiments":[%q]}`, exp) }, func(t *testing.T, got any) {
			if n := as[Note](t, got); n.Statement != "a note" || n.ID == 0 || n.Kind != NoteObservation {
				t.Fatalf("note gave %+v", n)
			}
		}},
		{"cancel", func() string { return fmt.Sprintf(`{"experiment":%q,"reason":"enough"}`, exp) }, func(t *testing.T, got any) {
			if r := as[Receipt](t, got); r.ID != exp || r.Status != ExpCancelled || r.Error != "enough" {
				t.Fatalf("cancel gave %s %s %q, want %s cancelled", r.ID, r.Status, r.Error, exp)
			}
		}},
	}
}

func runDispatchSteps(t *testing.T, lab *Lab, steps []dispatchStep) []string {
	t.Helper()
	covered := []string{}
	for _, st := range steps {
		got, err := lab.Call(context.Background(), st.call, []byte(st.args()))
		if err != nil {
			t.Fatalf("%s: %v", st.call, err)
		}
		st.check(t, got)
		covered = append(covered, st.call)
	}
	return covered
}

// ledgerDispatchSteps are the calls of the scientific modes on lab's
// structured study, after a finished workbench run they may link, in an
// order in which each succeeds.
func ledgerDispatchSteps(t *testing.T, lab *Lab) []dispatchStep {
	wb := mustCall[Receipt](t, lab, "run", `{"source":"orbit.py","outputs":["r.json"],"stage":"workbench","claim":"root"}`)
	finishRun(t, lab, wb.ID, ExpSucceeded, map[string]string{"r.json": `{"planets":[{"ok":true}]}`})
	return []dispatchStep{
		{"claim", func() string {
			return `{"statement":"the integrator is accurate","kind":"instrument","relation":"instrument_of","rationale":"trust the tool"}`
		}, func(t *testing.T, got any) {
			if c := as[Claim](t, got); c.Kind != KindInstrument || c.Relation != RelInstrumentOf {
				t.Fatalf("claim gave %+v", c)
			}
		}},
		{"contract", func() string { return contractArgs("root", "") }, func(t *testing.T, got any) {
			if r := as[ContractResult](t, got); r.Claim != RootClaim || r.Version != 1 {
				t.Fatalf("contract gave %+v", r)
			}
		}},
		{"link", func() string {
			return `{"claim":"root","experiment":"` + wb.ID + `","output":"r.json","sufficient":true}`
		}, func(t *testing.T, got any) {
			if k := as[Link](t, got); k.Counts || k.ContractVersion != 1 || len(k.Reasons) == 0 {
				t.Fatalf("link gave %+v", k)
			}
		}},
		{"review", func() string { return `{"stage":"contract","claim":"root"}` }, func(t *testing.T, got any) {
			if r := as[Review](t, got); r.Stage != StageContract || r.ContractVersion != 1 || r.Status != "queued" {
				t.Fatalf("review gave %+v", r)
			}
		}},
		{"close", func() string { return `{"claim":"root","status":"weakened","reason":"says too much"}` }, func(t *testing.T, got any) {
			if c := as[Claim](t, got); c.Status != string(LedgerWeakened) {
				t.Fatalf("close gave %+v", c)
			}
			startAssignment(t, lab, RoleFalsifier, RootClaim)
		}},
		{"handoff", func() string { return `{"outcome":"inconclusive","next_test":"try harder"}` }, func(t *testing.T, got any) {
			if a := as[Assignment](t, got); a.Status != AssignmentEnded || a.Handoff == nil || a.Handoff.NextTest != "try harder" {
				t.Fatalf("handoff gave %+v", a)
			}
		}},
	}
}

func as[T any](t *testing.T, got any) T {
	t.Helper()
	v, ok := got.(T)
	if !ok {
		t.Fatalf("result is a %T, want %T", got, v)
	}
	return v
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestLabCallRefusesAnUnknownName(t *testing.T) {
	c, s := newTestStudy(t, nil)
	lab := &Lab{C: c, S: s}
	ctx := context.Background()
	for _, name := range []string{"approve", "", "Note", "note "} {
		_, err := lab.Call(ctx, name, []byte(`{"statement":"should not be noted"}`))
		if err == nil || !strings.Contains(err.Error(), "unknown lab call") {
			t.Errorf("%q: want unknown lab call, got %v", name, err)
		}
	}
	snap, err := LoadSnapshot(ctx, c, s)
	if err != nil || len(snap.Notes) != 0 {
		t.Fatalf("unknown calls left %d notes (%v)", len(snap.Notes), err)
	}
}

func TestCallsIsACopy(t *testing.T) {
	calls := Calls()
	calls[0].Name = "changed"
	calls[0].Params[0].Name = "changed"
	calls[0].Params[len(calls[0].Params)-1].Properties[0].Name = "changed"
	run, ok := FindCall(CallNames()[0])
	if !ok || run.Params[0].Name == "changed" || run.Params[len(run.Params)-1].Properties[0].Name == "changed" {
		t.Fatalf("changing Calls() changed the table: %+v", run)
	}
}

func TestStatusResultEncodesAsWhatItHolds(t *testing.T) {
	r := Receipt{ID: "exp_1", Status: ExpQueued, Args: []string{"<a>"}}
	sum := StatusSummary{StudyHeader: StudyHeader{StudyID: "s"}, Claims: []Claim{{ID: "root", Statement: "&"}}}
	for _, tc := range []struct {
		res  StatusResult
		want any
	}{{StatusResult{Receipt: &r}, r}, {StatusResult{Summary: &sum}, sum}} {
		got, err1 := json.Marshal(map[string]any{"ok": true, "result": tc.res})
		want, err2 := json.Marshal(map[string]any{"ok": true, "result": tc.want})
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("encoded %s (%v), want %s (%v)", got, err1, want, err2)
		}
	}
}

func TestCheckArgsBoolean(t *testing.T) {
	spec := CallSpec{Name: "x", Params: []Param{{Name: "flag", Type: "boolean"}}}
	for args, want := range map[string]string{`{"flag":true}`: "", `{"flag":1}`: "must be true or false", `{"flag":"yes"}`: "must be true or false"} {
		err := spec.CheckArgs([]byte(args))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: got %v, want %q", args, err, want)
		}
	}
}

func TestWorkerGuideListsEveryCall(t *testing.T) {
	var b strings.Builder
	(&Supervisor{}).writeGuide(&b, turnPlan{role: RoleWorker})
	_, rest, ok := strings.Cut(b.String(), "Calls: ")
	list, _, ok2 := strings.Cut(rest, ".\n")
	if !ok || !ok2 {
		t.Fatalf("guide names no calls:\n%s", b.String())
	}
	if got := strings.Split(list, ", "); !slices.Equal(got, CallNamesFor(RoleWorker)) {
		t.Errorf("guide lists %v, want CallNamesFor(worker) %v", got, CallNamesFor(RoleWorker))
	}
	for _, role := range []Role{RoleFalsifier, RoleRepairScientist, RoleResearcher} {
		var b strings.Builder
		(&Supervisor{k: Contract{Mode: "structured"}}).writeGuide(&b, turnPlan{role: role})
		if want := "Your calls: " + strings.Join(CallNamesFor(role), ", ") + "."; !strings.Contains(b.String(), want) {
			t.Errorf("the %s's guide does not list its calls (%s):\n%s", role, want, b.String())
		}
	}
}

// TestEveryCallHasRoles: each row names the roles that may make it, every
// role of a mode makes some call, a name's rows have disjoint roles, and
// neither review role makes any call.
func TestEveryCallHasRoles(t *testing.T) {
	for _, c := range Calls() {
		if len(c.Roles) == 0 {
			t.Errorf("%s: no role may make it", c.Name)
		}
		for _, d := range Calls() {
			if c.Name == d.Name && c.Description != d.Description && slices.ContainsFunc(c.Roles, func(r Role) bool { return slices.Contains(d.Roles, r) }) {
				t.Errorf("%s: two rows share a role", c.Name)
			}
		}
	}
	for mode, roles := range modeRoles {
		for _, r := range roles {
			if len(CallsFor(r)) == 0 {
				t.Errorf("mode %s: role %s makes no call", mode, r)
			}
		}
	}
	for _, r := range []Role{RoleReviewer, RoleJudge} {
		if calls := CallNamesFor(r); len(calls) != 0 {
			t.Errorf("review role %s makes calls %v", r, calls)
		}
	}
	for _, want := range []struct {
		role  Role
		calls []string
	}{
		{RoleRepairScientist, []string{"status", "review_status", "claim", "contract", "review", "handoff"}},
		{RoleFalsifier, []string{"run", "status", "cancel", "review_status", "claim", "contract", "link", "close", "review", "handoff"}},
		{RoleResearcher, []string{"run", "status", "cancel", "review_status", "claim", "contract", "link", "close", "review"}},
	} {
		if got := CallNamesFor(want.role); !slices.Equal(got, want.calls) {
			t.Errorf("%s calls %v, want %v", want.role, got, want.calls)
		}
	}
}
