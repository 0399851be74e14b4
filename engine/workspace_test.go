package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceRootIsAFile: a workspace root that is a file, or has a file
// in its path, is one short line saying so first (the home screen cuts its
// message line to the width), for the home's listing and for the CLI's
// check (ErrInvalid); a missing root is an empty workspace.
func TestWorkspaceRootIsAFile(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "somefile")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, root, want string }{
		{"a file", file, "the workspace root is a file, not a folder: " + file},
		{"a file in the path", filepath.Join(file, "x"), "the workspace root has a file in its path: "},
		{"missing", filepath.Join(tmp, "none"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, listErr := ListStudies(context.Background(), tt.root)
			checkErr := CheckWorkspace(tt.root)
			if tt.want == "" {
				if listErr != nil || checkErr != nil {
					t.Fatalf("a missing root: want no error, got %v and %v", listErr, checkErr)
				}
				return
			}
			if listErr == nil || !strings.HasPrefix(listErr.Error(), tt.want) || strings.Contains(listErr.Error(), "\n") {
				t.Errorf("ListStudies: want one line starting %q, got %v", tt.want, listErr)
			}
			if !errors.Is(checkErr, ErrInvalid) || !strings.HasPrefix(checkErr.Error(), tt.want) {
				t.Errorf("CheckWorkspace: want ErrInvalid starting %q, got %v", tt.want, checkErr)
			}
		})
	}
}
