package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

func TestLabHelpListsEveryCall(t *testing.T) {
	var out, errb bytes.Buffer
	code := cmdLab(context.Background(), []string{"--help"}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if code != exitOK || out.Len() != 0 {
		t.Fatalf("lab --help: exit %d, stdout %q", code, out.String())
	}
	for _, c := range engine.Calls() {
		if !strings.Contains(errb.String(), "  "+c.Name+" ") || !strings.Contains(errb.String(), c.Description) {
			t.Errorf("lab --help does not list %s with its description:\n%s", c.Name, errb.String())
		}
	}
}

func TestLabRefusesBadUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no call", nil, "usage: simjecture lab CALL (one of " + strings.Join(engine.CallNames(), ", ") + ")"},
		{"two calls", []string{"run", "note"}, "usage: simjecture lab CALL"},
		{"unknown flag", []string{"--bogus", "run"}, "usage: simjecture lab CALL"},
		{"unknown call", []string{"approve"}, `unknown lab call \"approve\"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cmdLab(context.Background(), tc.args, stdio{in: strings.NewReader("{}"), out: &out, err: &errb})
			if code != exitAttention || !strings.Contains(out.String(), `"ok":false`) || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d, stdout %q; want exit %d and an error containing %q", code, out.String(), exitAttention, tc.want)
			}
		})
	}
}
