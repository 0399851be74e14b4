package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/engine"
)

// TestReadTextRefusesWhatTheCLIRefuses: the new-study form reads the
// operator's files through the engine's checks, so a binary, NUL-holding
// or oversized file is refused there as `study` refuses it, and a text
// file within its bound is read.
func TestReadTextRefusesWhatTheCLIRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		field   engine.Field
		content string
		want    string // "" when the file is accepted
	}{
		{"text", engine.FieldHypothesisFile, "Energy within 1 %\n", ""},
		{"not UTF-8", engine.FieldHypothesisFile, "energy \xff within 1 %\n", "is not UTF-8 text"},
		{"NUL", engine.FieldInstructionsFile, "run\x00\n", "holds NUL bytes"},
		{"over 64 KiB", engine.FieldHypothesisFile, strings.Repeat("x", engine.MaxHypothesisBytes+1), "is larger than 64 KiB"},
		{"instructions within 256 KiB", engine.FieldInstructionsFile, strings.Repeat("x", engine.MaxHypothesisBytes+1), ""},
		{"over 256 KiB", engine.FieldInstructionsFile, strings.Repeat("x", engine.MaxInstructionsBytes+1), "is larger than 256 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "f.txt")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			text, err := (&runtime{}).ReadText(context.Background(), tt.field, path)
			switch {
			case tt.want == "" && (err != nil || text != tt.content):
				t.Errorf("want the file read, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("want an error saying %q, got %v", tt.want, err)
			case tt.want != "" && strings.Contains(err.Error(), string(tt.field)):
				t.Errorf("the form names the field itself; the error repeats it: %v", err)
			}
		})
	}
}
