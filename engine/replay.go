package engine

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed" // the bundled demo record
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The bundled record of a finished demo study, for hosts that cannot run
// one (contract section 2: `simjecture demo --replay`). The record is the
// campaign folder of a real demo run, packed by PackRecord into a gzipped
// tar with a sha256 manifest beside it; WriteRecord checks every file
// against the manifest while it extracts. Regenerate both with
// `go test ./engine -run TestReplayRecord -update`.

var (
	//go:embed replaydata/demo.tar.gz
	demoRecord []byte
	//go:embed replaydata/demo.sha256
	demoManifest []byte
)

// RecordMarker is the file WriteRecord adds to a written record, so the
// study listing can tell a bundled record from a study run here.
const RecordMarker = "RECORD"

const recordMarkerText = "This folder is the bundled record of a finished simjecture demo study,\n" +
	"written by `simjecture demo --replay`: nothing in it was run on this host.\n" +
	"`simjecture verify --campaign .` checks it.\n"

// maxRecordFile bounds one file of a record, against a corrupt archive.
const maxRecordFile = 64 << 20

// IsRecord reports whether c was written by WriteRecord.
func IsRecord(c Campaign) bool {
	st, err := os.Stat(filepath.Join(c.Dir, RecordMarker))
	return err == nil && st.Mode().IsRegular()
}

// WriteRecord writes the bundled demo record into c.Dir, which must be
// missing or an empty folder. Nothing is left behind on failure: the
// record is extracted into a temporary sibling folder and renamed.
func WriteRecord(c Campaign) error {
	return extractRecord(c, demoRecord, demoManifest)
}

// extractRecord extracts archive (a gzipped tar) into c.Dir, refusing any
// file whose sha256 differs from manifest and any file missing on either
// side.
func extractRecord(c Campaign, archive, manifest []byte) error {
	if err := checkEmptyDir(c.Dir); err != nil {
		return err
	}
	want, err := parseManifest(manifest)
	if err != nil {
		return fmt.Errorf("bundled record: %w", err)
	}
	parent := filepath.Dir(c.Dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(c.Dir)+".record-")
	if err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	if err := fillRecord(tmp, archive, want); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("bundled record: %w", err)
	}
	if err := os.Remove(c.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = os.RemoveAll(tmp) // an empty folder, filled meanwhile
		return fmt.Errorf("write record: %w", err)
	}
	if err := os.Rename(tmp, c.Dir); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

// fillRecord extracts every file of archive into dir, checks the set and
// hashes against want, and adds the marker.
func fillRecord(dir string, archive []byte, want map[string]string) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := extractFile(dir, h, tr, want); err != nil {
			return err
		}
		seen[h.Name] = true
	}
	for name := range want {
		if !seen[name] {
			return fmt.Errorf("%s is in the manifest but not in the archive", name)
		}
	}
	return os.WriteFile(filepath.Join(dir, RecordMarker), []byte(recordMarkerText), 0o644)
}

// extractFile writes one regular file of the archive under dir after
// checking its name and its hash against want.
func extractFile(dir string, h *tar.Header, r io.Reader, want map[string]string) error {
	if h.Typeflag != tar.TypeReg || !filepath.IsLocal(h.Name) || h.Size > maxRecordFile {
		return fmt.Errorf("%s: not a regular file inside the record", h.Name)
	}
	sum, ok := want[h.Name]
	if !ok {
		return fmt.Errorf("%s is not in the manifest", h.Name)
	}
	body, err := io.ReadAll(io.LimitReader(r, maxRecordFile))
	if err != nil {
		return fmt.Errorf("%s: %w", h.Name, err)
	}
	if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != sum {
		return fmt.Errorf("%s does not match its sha256 in the manifest", h.Name)
	}
	path := filepath.Join(dir, filepath.FromSlash(h.Name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, body, os.FileMode(h.Mode)&0o755|0o644)
}

// parseManifest reads `sha256  path` lines (sha256sum's format).
func parseManifest(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != sha256.Size*2 || name == "" {
			return nil, fmt.Errorf("malformed manifest line %q", sc.Text())
		}
		if _, err := hex.DecodeString(sum); err != nil {
			return nil, fmt.Errorf("malformed manifest line %q", sc.Text())
		}
		out[name] = sum
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("empty manifest")
	}
	return out, nil
}

// checkEmptyDir refuses a path that is a file or a non-empty folder.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return fmt.Errorf("%s is a file, not a folder: %w", dir, ErrInvalid)
		}
		return fmt.Errorf("write record: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty; the record goes into a new or empty folder: %w", dir, ErrInvalid)
	}
	return nil
}
