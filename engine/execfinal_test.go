package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func TestNoSpaceNamesPathAndFreeBytes(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		err  error
		full bool
		want string
	}{
		{"path error", fmt.Errorf("collect r.bin: %w", &fs.PathError{Op: "write", Path: dir + "/r.bin", Err: syscall.ENOSPC}),
			true, "no space left on the device of " + dir + "/r.bin ("},
		{"bare ENOSPC", fmt.Errorf("x: %w", syscall.ENOSPC), true, "no space left on the device: "},
		{"other error", errors.New("exit 1"), false, "exit 1"},
		{"nil", nil, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, full := noSpace(tc.err)
			msg := fmt.Sprint(got)
			if got == nil {
				msg = ""
			}
			if full != tc.full || !strings.Contains(msg, tc.want) || (tc.name == "path error" && !strings.Contains(msg, "bytes free")) {
				t.Fatalf("noSpace(%v) = %q, %v", tc.err, msg, full)
			}
		})
	}
}
