package machine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// TestCheckReportUnknownIsNull: a check that never reached its worker
// writes its protocol, clock and backend as null; a reached one writes
// them as learnt.
func TestCheckReportUnknownIsNull(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rep  CheckReport
		want []string
	}{
		{"unreached", CheckReport{Worker: "w2", Reason: "ssh: connect refused", CPUs: 2},
			[]string{`"protocol":null`, `"clock":null`, `"backend":null`, `"uid":null`, `"clock_skew_seconds":null`, `"experiment":null`, `"cpus":2`}},
		{"reached", CheckReport{Worker: "w2", Protocol: Protocol, Clock: clock, Backend: sandbox.Report{Backend: sandbox.Bubblewrap, Available: true}},
			[]string{`"protocol":"` + Protocol + `"`, `"clock":"2026-12-01T23:00:00Z"`, `"backend":{"backend":"bubblewrap","available":true`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tt.rep)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("want %s in %s", w, b)
				}
			}
			if strings.Count(string(b), `"protocol"`) != 1 || strings.Contains(string(b), "0001-01-01") {
				t.Errorf("a field twice or a zero time: %s", b)
			}
		})
	}
}

// TestCheckReportFieldsAllWritten: MarshalJSON lists every field of
// CheckReport (a field added to the struct and not to MarshalJSON fails).
func TestCheckReportFieldsAllWritten(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(CheckReport{Reason: "r", Host: "h"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[CheckReport]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if _, ok := got[name]; !ok {
			t.Errorf("MarshalJSON leaves out %s: %s", name, b)
		}
	}
}
