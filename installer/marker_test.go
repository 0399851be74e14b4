package installer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestInspectPrefix(t *testing.T) {
	good := string(encodeMarker(Marker{Mode: ModeAccount, Account: "simjecture", UID: 998}))
	cases := []struct {
		name    string
		setup   func(t *testing.T, prefix string)
		account string
		marker  bool
		err     error
	}{
		{"missing: new installation", func(*testing.T, string) {}, "simjecture", false, nil},
		{"ours, same account: upgrade", withMarker(good), "simjecture", true, nil},
		{"ours, other account", withMarker(good), "other", false, ErrUnmanaged},
		{"empty folder without marker", mkdir, "simjecture", false, ErrUnmanaged},
		{"folder with files, no marker", withFile("data.txt", "keep me"), "simjecture", false, ErrUnmanaged},
		{"marker is not ours", withMarker(`{"managed_by":"someone else","account":"simjecture"}`), "simjecture", false, ErrUnmanaged},
		{"marker is garbage", withMarker("not json"), "simjecture", false, ErrUnmanaged},
		{"prefix is a file", writeAt(""), "simjecture", false, ErrUnmanaged},
		{"prefix is a symlink", symlinkTo("/srv"), "simjecture", false, ErrUnmanaged},
		{"marker is a symlink", markerSymlink, "simjecture", false, ErrUnmanaged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), "prefix")
			c.setup(t, prefix)
			m, err := inspectPrefix(prefix, c.account)
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("inspectPrefix error = %v, want %v", err, c.err)
			}
			if (m != nil) != c.marker {
				t.Fatalf("marker = %+v, want present=%v", m, c.marker)
			}
		})
	}
}

func TestEncodeMarkerRoundTrip(t *testing.T) {
	prefix := t.TempDir()
	in := Marker{Mode: ModeAccount, Account: "sj", UID: 7, Home: "/var/lib/sj", AccountCreated: true, Current: "simjecture-abc"}
	if err := os.WriteFile(filepath.Join(prefix, MarkerName), encodeMarker(in), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readMarker(prefix)
	if err != nil {
		t.Fatal(err)
	}
	in.Format, in.ManagedBy = 1, managedBy
	if *got != in {
		t.Fatalf("read back %+v, want %+v", *got, in)
	}
}

func mkdir(t *testing.T, prefix string) {
	t.Helper()
	if err := os.Mkdir(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
}

func withFile(name, text string) func(*testing.T, string) {
	return func(t *testing.T, prefix string) {
		mkdir(t, prefix)
		if err := os.WriteFile(filepath.Join(prefix, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func withMarker(text string) func(*testing.T, string) { return withFile(MarkerName, text) }

func writeAt(text string) func(*testing.T, string) {
	return func(t *testing.T, prefix string) {
		if err := os.WriteFile(prefix, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlinkTo(target string) func(*testing.T, string) {
	return func(t *testing.T, prefix string) {
		if err := os.Symlink(target, prefix); err != nil {
			t.Fatal(err)
		}
	}
}

func markerSymlink(t *testing.T, prefix string) {
	mkdir(t, prefix)
	real := filepath.Join(filepath.Dir(prefix), "elsewhere")
	if err := os.WriteFile(real, encodeMarker(Marker{Account: "simjecture"}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(prefix, MarkerName)); err != nil {
		t.Fatal(err)
	}
}
