package machine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// fetchFile streams one artifact into dst, checking its hash against the
// worker's final frame and the recorded want.
func fetchFile(ctx context.Context, s *session, job, name, dst, want string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("artifact %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".fetch-*")
	if err != nil {
		return fmt.Errorf("artifact %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	seq, ch := s.open()
	defer s.forget(seq)
	if err := s.w.write(frame{Seq: seq, Op: opFetch, Body: body(fetchArgs{ID: job, Name: name})}, true); err != nil {
		return fmt.Errorf("worker %s: %w: %w", s.t.p.ID, err, ErrUnreachable)
	}
	h := sha256.New()
	for {
		f, err := s.next(context.WithoutCancel(ctx), ch)
		if err != nil {
			return err
		}
		if f.Error != "" {
			return fmt.Errorf("worker %s: %s: %w", s.t.p.ID, f.Error, ErrRefused)
		}
		if _, err := tmp.Write(f.Data); err != nil {
			return fmt.Errorf("artifact %s: %w", name, err)
		}
		h.Write(f.Data)
		if f.Final {
			return finishFetch(tmp, dst, name, hex.EncodeToString(h.Sum(nil)), want, f.Body)
		}
	}
}

func finishFetch(tmp *os.File, dst, name, got, want string, raw json.RawMessage) error {
	var fr fetchReply
	if err := json.Unmarshal(raw, &fr); err != nil {
		return fmt.Errorf("artifact %s: %w: %w", name, err, ErrUnreachable)
	}
	if got != fr.SHA256 || got != want {
		return fmt.Errorf("artifact %s arrived with sha256 %s, the worker hashed %s and recorded %s: %w", name, got, fr.SHA256, want, ErrUnreachable)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("artifact %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("artifact %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("artifact %s: %w", name, err)
	}
	return nil
}
