package api

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/simjecture/simjecture/provider"
)

// A worker's conversation is kept in the study's state folder as
// api-conversation-<id>.jsonl, one line per message, appended and synced
// as each message is made (the prompt, each answer, each tool result), so
// a supervisor killed at any point loses at most the line it was writing.
// Each line carries the SHA-256 of the previous line's hash and its own
// message: a torn or altered tail is cut off at the first bad line when
// the conversation is loaded. Bounding it rewrites the file atomically.

// msg is one stored message of a conversation.
type msg struct {
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content,omitempty"`
	// Reasoning is an answer's reasoning_content, echoed back (DeepSeek).
	Reasoning string     `json:"reasoning,omitempty"`
	Calls     []toolCall `json:"-"`
	CallID    string     `json:"tool_call_id,omitempty"`
	Tool      string     `json:"tool,omitempty"`      // a tool result's function
	Turn      int        `json:"turn"`                // the worker turn that made it
	Done      bool       `json:"turn_done,omitempty"` // an answer that ended its turn
}

// storedCall is a tool call as a stored line spells it.
type storedCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"arguments"`
}

// line is one line of the conversation file.
type line struct {
	Msg   json.RawMessage `json:"msg"`
	Calls []storedCall    `json:"tool_calls,omitempty"`
	Hash  string          `json:"hash"`
}

// conversation is the stored conversation of a study's worker.
type conversation struct {
	id, path, key string
	msgs          []msg
	last          string // hash of the last line
	f             *os.File
}

const convPrefix, convSuffix = "api-conversation-", ".jsonl"

// openConversation loads the conversation id from dir, or starts a new one
// (removing older ones) when id is empty or its file is gone; lost says
// the latter happened to a given id.
func openConversation(dir, id, key string) (c *conversation, lost bool, err error) {
	if err := provider.EnsureDir(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("conversation folder: %w", err)
	}
	if id != "" && strings.HasPrefix(id, convPrefix) {
		c = &conversation{id: id, path: filepath.Join(dir, id+convSuffix), key: key}
		if err := c.load(); err == nil {
			return c, false, nil
		} else if !os.IsNotExist(err) {
			return nil, false, err
		}
	}
	c, err = newConversation(dir, key)
	return c, id != "", err
}

func newConversation(dir, key string) (*conversation, error) {
	old, _ := filepath.Glob(filepath.Join(dir, convPrefix+"*"+convSuffix))
	for _, p := range old {
		_ = os.Remove(p) // a fresh session: earlier ones are never resumed
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := convPrefix + hex.EncodeToString(b[:])
	c := &conversation{id: id, path: filepath.Join(dir, id+convSuffix), key: key}
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start the conversation: %w", err)
	}
	c.f = f
	return c, nil
}

// load reads the file up to its first bad line, cuts it there and opens it
// for appending.
func (c *conversation) load() error {
	b, err := readConversation(c.path)
	if err != nil {
		return err
	}
	good := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		m, hash, ok := c.parse(sc.Bytes())
		if !ok {
			break
		}
		c.msgs, c.last = append(c.msgs, m), hash
		good += len(sc.Bytes()) + 1
	}
	if good < len(b) {
		if err := os.Truncate(c.path, int64(good)); err != nil {
			return fmt.Errorf("cut the conversation's torn tail: %w", err)
		}
	}
	c.f, err = os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("open the conversation: %w", err)
	}
	return nil
}

// parse checks one line against the chain.
func (c *conversation) parse(b []byte) (msg, string, bool) {
	var l line
	var m msg
	if json.Unmarshal(b, &l) != nil || json.Unmarshal(l.Msg, &m) != nil || l.Hash != chain(c.last, l.Msg, l.Calls) {
		return msg{}, "", false
	}
	for _, sc := range l.Calls {
		m.Calls = append(m.Calls, toolCall{id: sc.ID, name: sc.Name, args: sc.Args})
	}
	return m, l.Hash, true
}

func chain(prev string, raw json.RawMessage, calls []storedCall) string {
	cb, _ := json.Marshal(calls)
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(raw)
	h.Write(cb)
	return hex.EncodeToString(h.Sum(nil))
}

// encode is the line of m after the line hashed prev; the key never enters it.
func (c *conversation) encode(m msg, prev string) ([]byte, string) {
	m.Content = redactAll(m.Content, c.key)
	raw, _ := json.Marshal(m)
	var calls []storedCall
	for _, tc := range m.Calls {
		calls = append(calls, storedCall{ID: tc.id, Name: tc.name, Args: redactAll(tc.args, c.key)})
	}
	hash := chain(prev, raw, calls)
	b, _ := json.Marshal(line{Msg: raw, Calls: calls, Hash: hash})
	return append(b, '\n'), hash
}

// add appends m and syncs it to disk before the conversation goes on.
func (c *conversation) add(m msg) error {
	b, hash := c.encode(m, c.last)
	if _, err := c.f.Write(b); err != nil {
		return fmt.Errorf("store the conversation: %w", err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("store the conversation: %w", err)
	}
	c.msgs, c.last = append(c.msgs, m), hash
	return nil
}

// rewrite replaces the file with msgs (a bounded conversation): a synced
// temporary file renamed over it.
func (c *conversation) rewrite(msgs []msg) error {
	var buf bytes.Buffer
	last := ""
	for _, m := range msgs {
		b, hash := c.encode(m, last)
		buf.Write(b)
		last = hash
	}
	tmp := c.path + ".tmp"
	if err := writeSynced(tmp, buf.Bytes()); err != nil {
		return fmt.Errorf("bound the conversation: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("bound the conversation: %w", err)
	}
	if d, err := os.Open(filepath.Dir(c.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	_ = c.f.Close()
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("open the conversation: %w", err)
	}
	c.f, c.msgs, c.last = f, msgs, last
	return nil
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Close closes the file.
func (c *conversation) Close() {
	if c.f != nil {
		_ = c.f.Close()
	}
}

// readConversation reads the stored conversation without following a
// symlink, at most maxConversationFile bytes.
func readConversation(path string) ([]byte, error) {
	f, err := provider.OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConversationFile))
	if err != nil {
		return nil, fmt.Errorf("read the conversation: %w", err)
	}
	return b, nil
}

// maxConversationFile bounds what is read of a stored conversation; the
// conversation is kept far smaller (bound.go), and a longer file is cut
// at its first bad line like a torn one.
const maxConversationFile = 256 << 20
