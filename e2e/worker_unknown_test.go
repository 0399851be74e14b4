package e2e

import (
	"encoding/json"
	"net"
	"strconv"
	"testing"
)

// TestWorkerCheckUnreachableIsNull: `worker check --json` on a worker it
// cannot reach (a loopback port nothing listens on) exits 1 and writes the
// figures it could not learn — protocol, clock, uid, skew, backend — as
// null, never as zero values.
func TestWorkerCheckUnreachableIsNull(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close() // now nothing listens there
	envv := scratchEnv(t.TempDir())
	if r := sjWith(t, envv, "", "worker", "add", "w2", "--host", "127.0.0.1", "--port", port); r.code != 0 {
		t.Fatalf("worker add: %s", r)
	}
	r := sjWith(t, envv, "", "worker", "check", "w2", "--json")
	var rep map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 1 {
		t.Fatalf("want exit 1 and one JSON object, got %s (%v)", r, err)
	}
	for _, k := range []string{"protocol", "clock", "uid", "clock_skew_seconds", "backend", "experiment"} {
		if v, ok := rep[k]; !ok || string(v) != "null" {
			t.Errorf("%s = %s, want null: %s", k, v, r.stdout)
		}
	}
	if string(rep["ready"]) != "false" || len(rep["reason"]) < 3 {
		t.Errorf("want ready false and a reason: %s", r.stdout)
	}
}
