package main

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestEnvDefaults: a value from a SIMJECTURE_DEFAULT_* variable is checked
// like a flag, naming the variable, unless the flag is given; and it counts
// as given when a resumed study is checked against its frozen contract.
func TestEnvDefaults(t *testing.T) {
	cases := []struct {
		name, env, value string
		args             []string
		wantErr          string // "" for none
		given            func(engine.Request) string
	}{
		{"unknown execution backend", "SIMJECTURE_DEFAULT_EXECUTION_BACKEND", "chroot", nil,
			`SIMJECTURE_DEFAULT_EXECUTION_BACKEND="chroot": choose one of auto`, nil},
		{"flag beats the variable", "SIMJECTURE_DEFAULT_EXECUTION_BACKEND", "chroot", []string{"--execution-backend", "auto"}, "",
			func(r engine.Request) string { return r.ExecutionBackend }},
		{"unknown agent backend", "SIMJECTURE_DEFAULT_BACKEND", "nope", nil, `SIMJECTURE_DEFAULT_BACKEND="nope": choose one of`, nil},
		{"capabilities not a folder", "SIMJECTURE_DEFAULT_CAPABILITIES", "/no/such/folder", nil,
			`SIMJECTURE_DEFAULT_CAPABILITIES="/no/such/folder": not a folder`, nil},
		{"model from the environment", "SIMJECTURE_DEFAULT_MODEL", "m1", nil, "",
			func(r engine.Request) string { return r.Model }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			f := newStudyFlags(stdio{out: &bytes.Buffer{}, err: &bytes.Buffer{}})
			if err := parseArgs(f.fs, tc.args, 0); err != nil {
				t.Fatal(err)
			}
			err := checkEnvDefaults(f.fs)
			if tc.wantErr != "" {
				if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("checkEnvDefaults = %v, want an invalid-input error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("checkEnvDefaults = %v", err)
			}
			want := tc.value
			if len(tc.args) > 0 {
				want = tc.args[1]
			}
			if got := tc.given(givenRequest(f)); got != want {
				t.Errorf("given value %q, want %q", got, want)
			}
		})
	}
}

// TestGivenRequestLeavesDefaultsOut: flags left at their defaults are not
// compared with the frozen contract.
func TestGivenRequestLeavesDefaultsOut(t *testing.T) {
	for _, env := range []string{"SIMJECTURE_DEFAULT_BACKEND", "SIMJECTURE_DEFAULT_MODEL", "SIMJECTURE_DEFAULT_EXECUTION_BACKEND", "SIMJECTURE_DEFAULT_CAPABILITIES"} {
		t.Setenv(env, "")
	}
	f := newStudyFlags(stdio{out: &bytes.Buffer{}, err: &bytes.Buffer{}})
	if err := parseArgs(f.fs, []string{"--mode", "structured"}, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := givenRequest(f), (engine.Request{Mode: "structured"}); !reflect.DeepEqual(got, want) {
		t.Errorf("givenRequest = %+v, want %+v", got, want)
	}
}
