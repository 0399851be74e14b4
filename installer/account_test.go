package installer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestValidateAccountName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"simjecture", true}, {"sjtest123456", true}, {"_svc", true}, {"a-b_c", true},
		{"root", false}, {"", false}, {"Simjecture", false}, {"1abc", false},
		{"has space", false}, {"../etc", false}, {"-rf", false},
		{"a234567890123456789012345678901", true}, {"a2345678901234567890123456789012", false},
	}
	for _, c := range cases {
		err := validateAccountName(c.name)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("validateAccountName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func TestCheckAccount(t *testing.T) {
	base := t.TempDir()
	old := homeBase
	homeBase = base
	t.Cleanup(func() { homeBase = old })
	if err := os.Mkdir(filepath.Join(base, "leftover"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		a    account
		err  error
	}{
		{"new account", account{Name: "fresh", UID: -1}, nil},
		{"new account, home already there", account{Name: "leftover", UID: -1}, ErrUnmanaged},
		{"existing, right home", account{Name: "sj", UID: 998, Home: filepath.Join(base, "sj"), Existed: true}, nil},
		{"existing with uid 0", account{Name: "sj", UID: 0, Home: filepath.Join(base, "sj"), Existed: true}, ErrAccount},
		{"existing with another home", account{Name: "sj", UID: 998, Home: "/home/sj", Existed: true}, ErrAccount},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkAccount(c.a)
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("checkAccount error = %v, want %v", err, c.err)
			}
		})
	}
}
