package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testKey = "sk-test-0123456789abcdef"

func writeConfig(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "conn.json")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		mode       os.FileMode
		wantErr    string // "" = accepted
	}{
		{"https", `{"base_url":"https://api.example.com/v1","api_key":"` + testKey + `"}`, 0o600, ""},
		{"read-only owner", `{"base_url":"https://api.example.com/v1","api_key":"sk-long-enough-key-42"}`, 0o400, ""},
		{"loopback http", `{"base_url":"http://127.0.0.1:8080/v1","api_key":"sk-long-enough-key-42"}`, 0o600, ""},
		{"loopback range", `{"base_url":"http://127.3.2.1/v1","api_key":"sk-long-enough-key-42"}`, 0o600, ""},
		{"localhost", `{"base_url":"http://localhost:9/v1","api_key":"sk-long-enough-key-42"}`, 0o600, ""},
		{"ipv6 loopback", `{"base_url":"http://[::1]:8080/v1","api_key":"sk-long-enough-key-42"}`, 0o600, ""},
		{"extra field", `{"backend":"builtin","base_url":"https://h/v1","api_key":"sk-long-enough-key-42"}`, 0o600, ""},
		{"group readable", `{"base_url":"https://h/v1","api_key":"` + testKey + `"}`, 0o640, "must be 0600"},
		{"world readable", `{"base_url":"https://h/v1","api_key":"` + testKey + `"}`, 0o644, "must be 0600"},
		{"plain http remote", `{"base_url":"http://api.example.com/v1","api_key":"sk-long-enough-key-42"}`, 0o600, "only loopback"},
		{"userinfo", `{"base_url":"https://u:` + testKey + `@h/v1","api_key":"` + testKey + `"}`, 0o600, "userinfo"},
		{"query", `{"base_url":"https://h/v1?key=1","api_key":"sk-long-enough-key-42"}`, 0o600, "query"},
		{"fragment", `{"base_url":"https://h/v1#x","api_key":"sk-long-enough-key-42"}`, 0o600, "fragment"},
		{"scheme", `{"base_url":"ftp://h/v1","api_key":"sk-long-enough-key-42"}`, 0o600, "http or https"},
		{"no host", `{"base_url":"https:///v1","api_key":"sk-long-enough-key-42"}`, 0o600, "no host"},
		{"no url", `{"api_key":"sk-long-enough-key-42"}`, 0o600, "base_url is empty"},
		{"no key", `{"base_url":"https://h/v1","api_key":"  "}`, 0o600, "api_key is empty"},
		{"not json", `base_url=https://h ` + testKey, 0o600, "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := writeConfig(t, c.body, c.mode)
			cfg, err := LoadConfig(p)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("LoadConfig: %v", err)
				}
				if strings.Contains(cfg.String()+cfg.GoString(), cfg.APIKey) {
					t.Errorf("Config.String shows the key: %s", cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("LoadConfig error = %v, want one containing %q", err, c.wantErr)
			}
			if msg := err.Error(); strings.Contains(msg, testKey) || strings.Contains(msg, "\n") {
				t.Errorf("the error is not one key-free line: %q", msg)
			}
		})
	}
}

func TestLoadConfigMissingAndFolder(t *testing.T) {
	t.Parallel()
	if err := CheckConfig(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := CheckConfig(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder: %v", err)
	}
}
