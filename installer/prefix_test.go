package installer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestValidatePrefix(t *testing.T) {
	tmp := t.TempDir()
	link := filepath.Join(tmp, "to-root")
	if err := os.Symlink("/root", link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, in, want string
		err            error
	}{
		{"default", "/srv/simjecture", "/srv/simjecture", nil},
		{"cleaned", "/srv//simjecture/./", "/srv/simjecture", nil},
		{"similar name is fine", "/rootless/x", "/rootless/x", nil},
		{"empty", "", "", ErrInvalid},
		{"relative", "srv/simjecture", "", ErrInvalid},
		{"filesystem root", "/", "", ErrInvalid},
		{"root home", "/root", "", ErrInvalid},
		{"under root home", "/root/x", "", ErrInvalid},
		{"dot-dot into root home", "/srv/../root/x", "", ErrInvalid},
		{"symlink into root home", filepath.Join(link, "x"), "", ErrInvalid},
		{"control character", "/srv/a\nb", "", ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := validatePrefix(c.in)
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("validatePrefix(%q) error = %v, want %v", c.in, err, c.err)
			}
			if got != c.want {
				t.Fatalf("validatePrefix(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestAncestors(t *testing.T) {
	got := ancestors("/srv/a/b")
	if want := []string{"/", "/srv", "/srv/a"}; !slices.Equal(got, want) {
		t.Fatalf("ancestors = %v, want %v", got, want)
	}
}

func TestCheckReachable(t *testing.T) {
	dir := func(mode fs.FileMode, uid, gid int) dirInfo {
		return dirInfo{Mode: fs.ModeDir | mode, UID: uid, GID: gid}
	}
	open := dir(0o755, 0, 0)
	cases := []struct {
		name string
		srv  dirInfo // the only folder that varies: /srv
		who  ids
		ok   bool
	}{
		{"world-searchable", open, ids{UID: -1}, true},
		{"private to root, new account", dir(0o700, 0, 0), ids{UID: -1}, false},
		{"group-only, new account", dir(0o750, 0, 50), ids{UID: -1}, false},
		{"group-only, member", dir(0o750, 0, 50), ids{UID: 998, GIDs: []int{998, 50}}, true},
		{"owner without x, other with x", dir(0o605, 998, 0), ids{UID: 998, GIDs: []int{998}}, false},
		{"owner with x", dir(0o700, 998, 998), ids{UID: 998, GIDs: []int{998}}, true},
		{"group without x, other with x", dir(0o745, 0, 998), ids{UID: 998, GIDs: []int{998}}, false},
		{"root reaches everything", dir(0o700, 5, 5), ids{UID: 0}, true},
		{"not a folder", dirInfo{Mode: 0o755}, ids{UID: -1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stat := func(p string) (dirInfo, error) {
				switch p {
				case "/":
					return open, nil
				case "/srv":
					return c.srv, nil
				}
				return dirInfo{}, fs.ErrNotExist // /srv/new and below do not exist yet
			}
			err := checkReachable("/srv/new/simjecture", c.who, stat)
			if (err == nil) != c.ok {
				t.Fatalf("checkReachable error = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}
