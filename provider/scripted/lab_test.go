package scripted

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fakeBin writes a shell script that stands in for `simjecture lab`.
func fakeBin(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "simjecture")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExecLab(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	tests := []struct {
		name    string
		script  string
		want    string
		wantErr error
	}{
		{"ok echoes call and stdin", `req=$(cat); printf 'log line\n{"ok":true,"result":{"id":"%s %s","req":%s}}\n' "$1" "$2" "$req"`,
			"lab note hi", nil},
		{"refused", `cat >/dev/null; echo '{"ok":false,"error":"unknown claim"}'; exit 1`, "", ErrLab},
		{"garbage", `cat >/dev/null; echo 'not json'`, "", ErrProtocol},
		{"crash without output", `cat >/dev/null; echo boom >&2; exit 3`, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out struct {
				ID  string            `json:"id"`
				Req map[string]string `json:"req"`
			}
			bin := fakeBin(t, tc.script)
			err := ExecLab{Bin: bin}.Call(context.Background(), "note", map[string]string{"statement": "hi"}, &out)
			// A child another test forked while the script was being
			// written still holds its write fd until that child execs:
			// exec then fails with ETXTBSY. That is the test's race, not
			// the call's; try again, a bounded number of times.
			for i := 0; i < 50 && errors.Is(err, syscall.ETXTBSY); i++ {
				err = ExecLab{Bin: bin}.Call(context.Background(), "note", map[string]string{"statement": "hi"}, &out)
			}
			switch {
			case tc.want != "":
				if err != nil || out.ID+" "+out.Req["statement"] != tc.want {
					t.Fatalf("got %+v, %v; want %q", out, err, tc.want)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			default:
				if err == nil {
					t.Fatal("crash not reported")
				}
			}
		})
	}
}
