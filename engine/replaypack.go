package engine

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PackRecord packs the finished study in c into a gzipped tar on w and
// returns its manifest (`sha256  path` lines, sorted by path). It keeps
// every regular file the record holds (the store, operator/, research/,
// sealed/, experiments/, supervisor/ logs, report.json, LEDGER.md) and
// leaves out the lock, the lab socket's name, the experiments' scratch folders, SQLite's
// transient files and a previous record's marker. The archive depends
// only on the files: names, contents and executable bits.
func PackRecord(c Campaign, w io.Writer) ([]byte, error) {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("pack record: %w", err)
	}
	tw := tar.NewWriter(zw)
	var manifest strings.Builder
	err = filepath.WalkDir(c.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == c.Scratch() {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || !packable(c, path) {
			return nil
		}
		rel, err := filepath.Rel(c.Dir, path)
		if err != nil {
			return err
		}
		sum, err := packFile(tw, path, filepath.ToSlash(rel))
		fmt.Fprintf(&manifest, "%s  %s\n", sum, filepath.ToSlash(rel))
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("pack record %s: %w", c.Dir, err)
	}
	return []byte(manifest.String()), nil
}

// packable reports whether a regular file belongs in a record.
func packable(c Campaign, path string) bool {
	switch path {
	case c.LockFile(), filepath.Join(c.Dir, RecordMarker), c.DB() + "-shm", c.DB() + "-journal",
		filepath.Join(c.Supervisor(), labNameFile):
		return false
	}
	return true
}

// packFile adds one file to tw under name, with a fixed owner and time,
// and returns its sha256.
func packFile(tw *tar.Writer, path, name string) (string, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	mode := int64(0o644)
	if st.Mode()&0o111 != 0 {
		mode = 0o755
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)),
		ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return "", err
	}
	if _, err := tw.Write(body); err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), nil
}
