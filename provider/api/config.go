package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
)

// ErrConfig marks a connection file that cannot be used.
var ErrConfig = errors.New("api connection file")

// Redacted replaces the API key wherever an error or log would quote it.
const Redacted = "[redacted]"

// maxConfigBytes bounds the connection file.
const maxConfigBytes = 64 << 10

// Config is the content of the connection file.
type Config struct {
	BaseURL string `json:"base_url"`
	APIKey  string `json:"api_key"`
	// MaxConversationChars bounds the worker's stored conversation
	// (DefaultMaxConversationChars when 0; at least MinConversationChars).
	MaxConversationChars int `json:"max_conversation_chars"`
}

// conversationLimit is the bound of the worker's stored conversation.
func (c Config) conversationLimit() int {
	if c.MaxConversationChars == 0 {
		return DefaultMaxConversationChars
	}
	return c.MaxConversationChars
}

// String never shows the key.
func (c Config) String() string { return "api connection " + c.BaseURL + " (key " + Redacted + ")" }

// GoString never shows the key either.
func (c Config) GoString() string { return c.String() }

// CheckConfig loads the connection file and reports the first problem, in
// one line, without the key.
func CheckConfig(path string) error {
	_, err := LoadConfig(path)
	return err
}

// LoadConfig reads and checks the connection file: a regular file of mode
// 0600 (no group or other access) holding base_url (http or https, no
// userinfo, query or fragment; plain http only for a loopback host) and a
// non-empty api_key.
func LoadConfig(path string) (Config, error) {
	var c Config
	f, err := os.Open(path)
	if err != nil {
		return c, fmt.Errorf("%w %s: %w", ErrConfig, path, cause(err))
	}
	defer f.Close()
	if err := checkMode(f, path); err != nil {
		return c, err
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return c, fmt.Errorf("%w %s: read: %w", ErrConfig, path, err)
	}
	if len(raw) > maxConfigBytes {
		return c, fmt.Errorf("%w %s: larger than %d bytes", ErrConfig, path, maxConfigBytes)
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		// The decoder's messages name types and offsets, never values.
		return Config{}, fmt.Errorf("%w %s: not a JSON object with base_url and api_key: %w", ErrConfig, path, err)
	}
	c.BaseURL = strings.TrimSpace(c.BaseURL)
	if strings.TrimSpace(c.APIKey) == "" {
		return Config{}, fmt.Errorf("%w %s: api_key is empty", ErrConfig, path)
	}
	if c.MaxConversationChars != 0 && c.MaxConversationChars < MinConversationChars {
		return Config{}, fmt.Errorf("%w %s: max_conversation_chars must be at least %d (or left out for %d)", ErrConfig, path,
			MinConversationChars, DefaultMaxConversationChars)
	}
	if err := checkBaseURL(c.BaseURL); err != nil {
		return Config{}, fmt.Errorf("%w %s: %w", ErrConfig, path, err) // never quotes the URL
	}
	return c, nil
}

// cause drops the operation and path an *os.PathError repeats.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func checkMode(f *os.File, path string) error {
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrConfig, path, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%w %s: not a regular file", ErrConfig, path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w %s: mode %04o lets other accounts read the key; it must be 0600 (chmod 600 %s)", ErrConfig, path, perm, path)
	}
	return nil
}

// checkBaseURL accepts http(s) URLs without userinfo, query or fragment;
// plain http only for loopback hosts.
func checkBaseURL(raw string) error {
	if raw == "" {
		return errors.New("base_url is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("base_url is not a URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("base_url must be http or https, not %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return errors.New("base_url has no host")
	case u.User != nil:
		return errors.New("base_url must not carry credentials (userinfo); put the key in api_key")
	case u.RawQuery != "" || u.ForceQuery:
		return errors.New("base_url must not have a query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("base_url must not have a fragment")
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return fmt.Errorf("base_url uses plain http for %s; only loopback hosts (localhost, 127.0.0.0/8, ::1) may, use https", u.Hostname())
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redact replaces every occurrence of secret in s and caps s at 1,500
// characters.
func redact(s, secret string) string {
	if secret != "" {
		s = strings.ReplaceAll(s, secret, Redacted)
	}
	if len(s) > 1500 {
		s = s[:1500] + "…"
	}
	return s
}
