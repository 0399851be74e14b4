package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/simjecture/simjecture/provider"
)

// Log caps: a chatty model cannot fill the disk.
const (
	maxTranscriptBytes = 64 << 20
	maxStdoutBytes     = 16 << 20
)

// transcript keeps a turn's records in its log folder: prompt.txt,
// transcript.jsonl (requests, tool calls, results, usage), stdout.log (the
// model's text) and stderr.log (failures). Every line is redacted.
type transcript struct {
	key            string
	events, stdout *os.File
	stderr         *os.File
	eventBytes     int64
	stdoutBytes    int64
}

func openTranscript(dir, prompt, key string) (*transcript, error) {
	if err := provider.EnsureDir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("turn log folder: %w", err)
	}
	if err := provider.WriteNew(filepath.Join(dir, "prompt.txt"), []byte(redact(prompt, key)), 0o644); err != nil {
		return nil, fmt.Errorf("write prompt: %w", err)
	}
	t := &transcript{key: key}
	var err error
	for name, dst := range map[string]**os.File{"transcript.jsonl": &t.events, "stdout.log": &t.stdout, "stderr.log": &t.stderr} {
		if *dst, err = provider.CreateNew(filepath.Join(dir, name), 0o644); err != nil {
			t.Close()
			return nil, fmt.Errorf("turn log: %w", err)
		}
	}
	return t, nil
}

// event appends one record to transcript.jsonl.
func (t *transcript) event(kind string, fields map[string]any) {
	rec := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "kind": kind}
	for k, v := range fields {
		rec[k] = v
	}
	b, err := json.Marshal(rec)
	if err != nil || t.eventBytes > maxTranscriptBytes {
		return
	}
	line := redactBytes(b, t.key)
	t.eventBytes += int64(len(line) + 1)
	_, _ = t.events.Write(append(line, '\n'))
}

// say appends the model's text to stdout.log.
func (t *transcript) say(text string) {
	if text == "" || t.stdoutBytes > maxStdoutBytes {
		return
	}
	s := redactAll(text, t.key) + "\n"
	t.stdoutBytes += int64(len(s))
	_, _ = t.stdout.WriteString(s)
}

// fail appends a failure to stderr.log.
func (t *transcript) fail(msg string) {
	_, _ = t.stderr.WriteString(redactAll(msg, t.key) + "\n")
}

// Close closes the log files.
func (t *transcript) Close() {
	for _, f := range []*os.File{t.events, t.stdout, t.stderr} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// redactAll replaces the key without shortening the text.
func redactAll(s, key string) string {
	if key == "" {
		return s
	}
	return string(redactBytes([]byte(s), key))
}

// redactBytes replaces the key and its JSON-escaped form.
func redactBytes(b []byte, key string) []byte {
	if key == "" {
		return b
	}
	b = bytes.ReplaceAll(b, []byte(key), []byte(Redacted))
	if enc, err := json.Marshal(key); err == nil {
		if esc := enc[1 : len(enc)-1]; string(esc) != key {
			b = bytes.ReplaceAll(b, esc, []byte(Redacted))
		}
	}
	return b
}
