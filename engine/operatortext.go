package engine

import (
	"bytes"
	"io"
	"os"
	"unicode/utf8"
)

// The largest hypothesis and instructions files a study takes
// (docs/campaign.md, "Operator files"): far more than either ever needs,
// and small enough that every review packet (at most 1 MB) carries both.
const (
	MaxHypothesisBytes   = 64 << 10
	MaxInstructionsBytes = 256 << 10
)

// operatorFileLimit is the bound of the operator file behind field f.
func operatorFileLimit(f Field) int64 {
	if f == FieldInstructionsFile {
		return MaxInstructionsBytes
	}
	return MaxHypothesisBytes
}

// readBounded reads path, but never more than limit+1 bytes: a file over
// the bound is refused without reading it all.
func readBounded(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

// CheckOperatorText refuses an operator file (hypothesis or instructions,
// named by its field f) that is not text: larger than its bound, holding a
// NUL byte, or not valid UTF-8. The CLI and the TUI's new-study form both
// read the files through it.
func CheckOperatorText(f Field, path string, b []byte) error {
	limit := operatorFileLimit(f)
	switch {
	case int64(len(b)) > limit:
		return badField(f, "%s is larger than %d KiB", Printable(path), limit>>10)
	case bytes.IndexByte(b, 0) >= 0:
		return badField(f, "%s holds NUL bytes: it is not text", Printable(path))
	case !utf8.Valid(b):
		return badField(f, "%s is not UTF-8 text", Printable(path))
	}
	return nil
}

// ReadOperatorText reads the operator file behind field f (the hypothesis
// or the instructions file) within its bound and checks that it is text.
func ReadOperatorText(f Field, path string) (string, error) {
	b, err := readBounded(path, operatorFileLimit(f))
	if err != nil {
		return "", err
	}
	if err := CheckOperatorText(f, path, b); err != nil {
		return "", err
	}
	return string(b), nil
}
