package engine

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/store"
)

// allPayloads has one value of every payload type; TestEventTypesArePayloads
// holds it equal to the types events.go gives an eventType method.
var allPayloads = []payload{
	StudyCreatedPayload{}, StudyStatePayload{}, ActivityPayload{}, TurnStartedPayload{}, TurnEndedPayload{},
	IdleTurnPayload{}, SessionRecoveryPayload{}, ExperimentQueuedPayload{}, ExperimentStartedPayload{},
	ExperimentFinishedPayload{}, ExperimentInterruptedPayload{}, ExperimentCancelRequestedPayload{}, ExperimentPlacedPayload{},
	ClaimCommittedPayload{}, ClaimStatusPayload{}, ReviewQueuedPayload{}, ReviewResolvedPayload{},
	ReviewFailedPayload{}, NoteAddedPayload{}, ControlRequestedPayload{}, HarnessErrorPayload{},
	ProviderReconnectScheduledPayload{}, ProviderReconnectedPayload{}, ProviderNeedsAttentionPayload{},
	UsagePayload{}, RecordPayload{}, ClaimRegisteredPayload{}, ContractRegisteredPayload{},
	EvidenceLinkedPayload{}, ClaimClosedPayload{}, SteeringQueuedPayload{}, SteeringDeliveredPayload{},
	ReviewRequestedPayload{}, ContractReviewedPayload{}, AdjudicatedPayload{}, AssignmentStartedPayload{}, HandoffPayload{},
	PoolUnreachablePayload{}, PoolRecoveredPayload{},
}

// eventSource is what the package's non-test files say about events.
type eventSource struct {
	constants map[string]EventType // const name → value, of type EventType
	methods   []string             // receiver types of eventType methods
	appended  map[string]bool      // payload types passed to appendEvent as literals
	problems  []string             // calls that bypass appendEvent or hide the payload type
}

func readEventSource(t *testing.T) eventSource {
	t.Helper()
	src := eventSource{constants: map[string]EventType{}, appended: map[string]bool{}}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		src.scan(fset, name, f)
	}
	return src
}

func (src *eventSource) scan(fset *token.FileSet, name string, f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			src.scanConsts(d)
		case *ast.FuncDecl:
			if d.Name.Name == "eventType" && d.Recv != nil {
				if id, ok := d.Recv.List[0].Type.(*ast.Ident); ok {
					src.methods = append(src.methods, id.Name)
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		at := fset.Position(call.Pos()).String()
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			if fn.Sel.Name == "Append" && name != "events.go" {
				src.problems = append(src.problems, at+": calls Append; use appendEvent")
			}
		case *ast.Ident:
			if fn.Name == "appendEvent" {
				src.scanAppend(call, at)
			}
		}
		return true
	})
}

func (src *eventSource) scanConsts(d *ast.GenDecl) {
	if d.Tok != token.CONST {
		return
	}
	for _, spec := range d.Specs {
		vs := spec.(*ast.ValueSpec)
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "EventType" {
			continue
		}
		for i, n := range vs.Names {
			if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
				v, _ := strconv.Unquote(lit.Value)
				src.constants[n.Name] = EventType(v)
			}
		}
	}
}

func (src *eventSource) scanAppend(call *ast.CallExpr, at string) {
	if len(call.Args) != 2 {
		return
	}
	lit, ok := call.Args[1].(*ast.CompositeLit)
	if !ok {
		src.problems = append(src.problems, at+": appendEvent's payload is not a literal")
		return
	}
	if id, ok := lit.Type.(*ast.Ident); ok {
		src.appended[id.Name] = true
	}
}

func typeName(p payload) string { return reflect.TypeOf(p).Name() }

// TestEventTypesArePayloads: every EventType constant belongs to exactly
// one payload type, and the test's list of payloads is complete.
func TestEventTypesArePayloads(t *testing.T) {
	src := readEventSource(t)
	var listed []string
	owner := map[EventType]string{}
	for _, p := range allPayloads {
		listed = append(listed, typeName(p))
		if prev, dup := owner[p.eventType()]; dup {
			t.Errorf("%s and %s both claim event type %s", prev, typeName(p), p.eventType())
		}
		owner[p.eventType()] = typeName(p)
	}
	slices.Sort(listed)
	slices.Sort(src.methods)
	if !slices.Equal(listed, src.methods) {
		t.Errorf("payload types with an eventType method %v, allPayloads lists %v", src.methods, listed)
	}
	for name, v := range src.constants {
		if _, ok := owner[v]; !ok {
			t.Errorf("event type %s (%q) has no payload type", name, v)
		}
	}
	if len(src.constants) != len(owner) {
		t.Errorf("%d event type constants, %d payload types", len(src.constants), len(owner))
	}
}

// TestEventTypesListsEveryType: EventTypes names each payload's type once.
func TestEventTypesListsEveryType(t *testing.T) {
	var want, got []string
	for _, p := range allPayloads {
		want = append(want, string(p.eventType()))
	}
	for _, e := range EventTypes() {
		got = append(got, string(e))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("EventTypes() = %v, the payload types are %v", got, want)
	}
}

// TestEveryEventTypeIsAppended: no event type is dead, and nothing reaches
// the log except through appendEvent with a payload literal.
func TestEveryEventTypeIsAppended(t *testing.T) {
	src := readEventSource(t)
	for _, p := range allPayloads {
		if !src.appended[typeName(p)] {
			t.Errorf("%s (event %s) is never appended", typeName(p), p.eventType())
		}
	}
	for _, problem := range src.problems {
		t.Error(problem)
	}
}

// payloadFields lists the JSON names of t's fields in encoding order,
// embedded structs flattened.
func payloadFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, payloadFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}

// documentedEvents reads the table of docs/campaign.md's "Event types":
// event type → its payload fields as listed.
func documentedEvents(t *testing.T) map[EventType][]string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "docs", "campaign.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(body), "\n## Event types\n")
	if !ok {
		t.Fatal(`docs/campaign.md has no "## Event types" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	out := map[EventType][]string{}
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if !strings.HasPrefix(line, "| `") || len(cells) != 3 {
			continue
		}
		typ := EventType(strings.Trim(strings.TrimSpace(cells[0]), "`"))
		if _, dup := out[typ]; dup {
			t.Errorf("docs/campaign.md lists %s twice", typ)
		}
		out[typ] = []string{}
		for f := range strings.SplitSeq(cells[1], ",") {
			if f = strings.Trim(strings.TrimSpace(f), "`"); f != "" {
				out[typ] = append(out[typ], f)
			}
		}
	}
	return out
}

// TestEventTypesDocumented holds the table in docs/campaign.md equal to the
// payload types, both ways: every type with its fields in JSON order.
func TestEventTypesDocumented(t *testing.T) {
	doc := documentedEvents(t)
	for _, p := range allPayloads {
		want := payloadFields(reflect.TypeOf(p))
		got, ok := doc[p.eventType()]
		switch {
		case !ok:
			t.Errorf("docs/campaign.md does not list %s (fields %s)", p.eventType(), strings.Join(want, ", "))
		case !slices.Equal(got, want):
			t.Errorf("docs/campaign.md lists %s with fields %v, its payload has %v", p.eventType(), got, want)
		}
		delete(doc, p.eventType())
	}
	for typ := range doc {
		t.Errorf("docs/campaign.md lists %s, which is no event type", typ)
	}
}

// TestEventPayloadJSON pins each payload's encoding to what the map
// literals it replaced wrote: same keys, order and omissions.
func TestEventPayloadJSON(t *testing.T) {
	wall, limit, next := 1.5, "memory", "rerun"
	in, out := int64(3), int64(4)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		p    payload
		want string
	}{
		{StudyStatePayload{Status: StatusRunning, Activity: "a"}, `{"activity":"a","status":"running"}`},
		{ActivityPayload{Activity: "a"}, `{"activity":"a"}`},
		{TurnStartedPayload{Turn: 2, Role: "worker"}, `{"role":"worker","turn":2}`},
		{TurnEndedPayload{Turn: 2}, `{"turn":2}`},
		{TurnEndedPayload{Turn: 2, Logs: TurnLogs{"supervisor/turn-00002/stdout.log": {SHA256: "h", Bytes: 3}}},
			`{"logs":{"supervisor/turn-00002/stdout.log":{"sha256":"h","bytes":3}},"turn":2}`},
		{IdleTurnPayload{Streak: 1}, `{"streak":1}`},
		{SessionRecoveryPayload{IdleStreak: 3, Recoveries: 1}, `{"idle_streak":3,"recoveries":1}`},
		{ExperimentQueuedPayload{Experiment: "e1", Source: "s"}, `{"args":null,"experiment":"e1","source":"s"}`},
		{ExperimentStartedPayload{Experiment: "e1", Backend: "process"}, `{"backend":"process","experiment":"e1"}`},
		{ExperimentFinishedPayload{Experiment: "e1", Status: ExpFailed},
			`{"experiment":"e1","limit_exceeded":null,"status":"failed","wall_seconds":null}`},
		{ExperimentFinishedPayload{Experiment: "e1", Status: ExpSucceeded, WallSeconds: &wall, LimitExceeded: &limit},
			`{"experiment":"e1","limit_exceeded":"memory","status":"succeeded","wall_seconds":1.5}`},
		{ExperimentFinishedPayload{Experiment: "e1", Status: ExpCancelled, WallSeconds: &wall, NeverRan: true},
			`{"experiment":"e1","status":"cancelled"}`},
		{ExperimentInterruptedPayload{Experiment: "e1"}, `{"experiment":"e1"}`},
		{ExperimentCancelRequestedPayload{Experiment: "e1", Reason: "r"}, `{"experiment":"e1","reason":"r"}`},
		{ClaimCommittedPayload{Claim: "c2", Parent: "c1", Statement: "s"}, `{"claim":"c2","parent":"c1","statement":"s"}`},
		{ClaimStatusPayload{Claim: "c1", Status: "supported"}, `{"claim":"c1","status":"supported"}`},
		{ReviewQueuedPayload{Review: "r1", Claim: "c1", Disposition: "d"}, `{"claim":"c1","disposition":"d","review":"r1"}`},
		{ReviewResolvedPayload{Review: "r1", Claim: "c1", Decision: "approved", Disposition: "d", Rationale: "x"},
			`{"claim":"c1","decision":"approved","disposition":"d","next_test":null,"rationale":"x","review":"r1"}`},
		{ReviewResolvedPayload{Review: "r1", NextTest: &next},
			`{"claim":"","decision":"","disposition":"","next_test":"rerun","rationale":"","review":"r1"}`},
		{ReviewFailedPayload{Review: "r1", Attempt: 1, Error: "e"}, `{"attempt":1,"error":"e","review":"r1"}`},
		{NoteAddedPayload{Note{ID: 1, Statement: "s", CreatedAt: at}}, `{"id":1,"statement":"s","created_at":"2026-01-02T03:04:05Z"}`},
		{ControlRequestedPayload{Command: Pause}, `{"command":"pause"}`},
		{HarnessErrorPayload{Error: "e", Consecutive: 2}, `{"consecutive":2,"error":"e"}`},
		{HarnessErrorPayload{Error: "e", Where: "executor"}, `{"error":"e","where":"executor"}`},
		{ProviderReconnectScheduledPayload{Attempt: 1, DelaySeconds: 2, Deadline: at, Error: "e"},
			`{"attempt":1,"deadline":"2026-01-02T03:04:05Z","delay_seconds":2,"error":"e"}`},
		{ProviderReconnectedPayload{Attempts: 2}, `{"attempts":2}`},
		{ProviderNeedsAttentionPayload{Category: "auth", Attention: "m"}, `{"attention":"m","category":"auth"}`},
		{UsagePayload{Thread: "w"}, `{"input_tokens":null,"output_tokens":null,"thread":"w"}`},
		{UsagePayload{Thread: "w", InputTokens: &in, OutputTokens: &out}, `{"input_tokens":3,"output_tokens":4,"thread":"w"}`},
		{RecordPayload{Kind: store.Claims, ID: "c1", Status: "open", SHA256: "h"}, `{"kind":"claims","id":"c1","status":"open","sha256":"h"}`},
		{ClaimRegisteredPayload{Claim: "c2", Kind: KindInstrument, Parent: "root", Relation: RelInstrumentOf, Statement: "s"},
			`{"claim":"c2","kind":"instrument","parent":"root","relation":"instrument_of","statement":"s"}`},
		{ContractRegisteredPayload{Claim: "c1", Purpose: PurposeDecision, Version: 2}, `{"claim":"c1","purpose":"decision","version":2}`},
		{EvidenceLinkedPayload{Claim: "c1", ContractVersion: 1, Counts: true, Experiment: "e1", Output: "o.json"},
			`{"claim":"c1","contract_version":1,"counts":true,"experiment":"e1","output":"o.json"}`},
		{ClaimClosedPayload{Claim: "c1", ContractVersion: 1, Reason: "r", Status: LedgerFalsified},
			`{"claim":"c1","contract_version":1,"reason":"r","status":"falsified"}`},
	}
	for _, c := range cases {
		t.Run(typeName(c.p), func(t *testing.T) {
			b, err := json.Marshal(c.p)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}

// TestStudyCreatedIsTheContract: the study_created payload encodes as the
// contract itself.
func TestStudyCreatedIsTheContract(t *testing.T) {
	k := Contract{StudyID: "s1", Mode: "minimal", CapabilityHashes: map[string]string{"a": "b"}}
	want, _ := json.Marshal(k)
	got, err := json.Marshal(StudyCreatedPayload{k})
	if err != nil || string(got) != string(want) {
		t.Fatalf("got %s (%v), want %s", got, err, want)
	}
}
