package machine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

func validSSH() Profile {
	return Profile{ID: "w1", Kind: KindSSH, Host: "example.org", Port: 22, User: "alice", Root: "/srv/sj",
		ExecutionBackend: sandbox.Bubblewrap, CPUs: 2, MemoryMB: 4096, MaxJobs: 2}
}

// TestProfileValidation: every field is checked on its own, and the error
// names its flag.
func TestProfileValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, flag string
		edit       func(*Profile)
	}{
		{"id grammar", "worker id", func(p *Profile) { p.ID = "W1" }},
		{"id too long", "worker id", func(p *Profile) { p.ID = "a" + strings.Repeat("b", 40) }},
		{"id local", "this host", func(p *Profile) { p.ID = "local" }},
		{"host missing", "--host", func(p *Profile) { p.Host = "" }},
		{"host option", "--host", func(p *Profile) { p.Host = "-oProxyCommand=x" }},
		{"host shell", "--host", func(p *Profile) { p.Host = "a;b" }},
		{"port zero", "--port", func(p *Profile) { p.Port = 0 }},
		{"port high", "--port", func(p *Profile) { p.Port = 65536 }},
		{"user option", "--user", func(p *Profile) { p.User = "-l" }},
		{"run-as root", "--run-as", func(p *Profile) { p.RunAs = "root" }},
		{"run-as grammar", "--run-as", func(p *Profile) { p.RunAs = "Bob!" }},
		{"root relative", "--root", func(p *Profile) { p.Root = "srv" }},
		{"root slash", "--root", func(p *Profile) { p.Root = "/" }},
		{"root dotdot", "--root", func(p *Profile) { p.Root = "/srv/../etc" }},
		{"root space", "--root", func(p *Profile) { p.Root = "/srv/a b" }},
		{"identity relative", "--identity-file", func(p *Profile) { p.IdentityFile = "id" }},
		{"known hosts relative", "--known-hosts", func(p *Profile) { p.KnownHosts = "kh" }},
		{"backend", "--execution-backend", func(p *Profile) { p.ExecutionBackend = "docker" }},
		{"cpus", "--cpus", func(p *Profile) { p.CPUs = 0 }},
		{"memory", "--memory-mb", func(p *Profile) { p.MemoryMB = 64 }},
		{"jobs", "--max-jobs", func(p *Profile) { p.MaxJobs = 257 }},
		{"grace", "--orphan-grace", func(p *Profile) { p.OrphanGrace = -1 }},
	}
	if err := Validate(validSSH()); err != nil {
		t.Fatalf("a valid profile: %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := validSSH()
			tc.edit(&p)
			err := Validate(p)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("Validate = %v; want ErrInvalid naming %q", err, tc.flag)
			}
		})
	}
}

// TestRegistryModes: profiles are 0600 in a 0700 folder; an invalid one
// writes nothing; Load refuses an unknown field.
func TestRegistryModes(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(filepath.Join(t.TempDir(), "cfg"))
	bad := validSSH()
	bad.Port = 0
	if err := reg.Save(bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Save of an invalid profile = %v", err)
	}
	if _, err := os.Stat(reg.Dir()); !os.IsNotExist(err) {
		t.Fatalf("an invalid profile wrote %s (%v)", reg.Dir(), err)
	}
	if err := reg.Save(validSSH()); err != nil {
		t.Fatal(err)
	}
	dir, _ := os.Stat(reg.Dir())
	file, _ := os.Stat(filepath.Join(reg.Dir(), "w1.json"))
	if dir.Mode().Perm() != 0o700 || file.Mode().Perm() != 0o600 {
		t.Errorf("modes: folder %v, file %v; want 0700 and 0600", dir.Mode().Perm(), file.Mode().Perm())
	}
	got, err := reg.Load("w1")
	if err != nil || got != validSSH() {
		t.Errorf("Load = %+v, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(reg.Dir(), "w2.json"), []byte(`{"id":"w2","kind":"ssh","extra":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Load("w2"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Load of a profile with an unknown field = %v", err)
	}
	if err := reg.Remove("w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Load("w1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load after Remove = %v", err)
	}
}

// TestIdentityHash: routing fields change a worker's identity; credentials
// and capacity do not.
func TestIdentityHash(t *testing.T) {
	t.Parallel()
	base := validSSH().IdentityHash()
	same := []func(*Profile){
		func(p *Profile) { p.IdentityFile = "/k" }, func(p *Profile) { p.KnownHosts = "/kh" },
		func(p *Profile) { p.CPUs = 8 }, func(p *Profile) { p.MaxJobs = 9 }, func(p *Profile) { p.OrphanGrace = 5 },
	}
	changed := []func(*Profile){
		func(p *Profile) { p.Host = "other" }, func(p *Profile) { p.Port = 2222 }, func(p *Profile) { p.User = "bob" },
		func(p *Profile) { p.RunAs = "sj" }, func(p *Profile) { p.Root = "/srv/x" },
		func(p *Profile) { p.ExecutionBackend = sandbox.Auto },
	}
	for i, edit := range append(same, changed...) {
		p := validSSH()
		edit(&p)
		if differs := p.IdentityHash() != base; differs != (i >= len(same)) {
			t.Errorf("edit %d: identity changed = %v", i, differs)
		}
	}
}

// TestKindTableWired: every row of the machines table has its summary,
// checks, constructor, preparation and probe, accepts a minimal valid
// profile and opens a machine with the profile's id.
func TestKindTableWired(t *testing.T) {
	t.Parallel()
	minimal := map[Kind]Profile{
		KindLocal: LocalProfile(sandbox.Bubblewrap, 2, 1024),
		KindSSH:   validSSH(),
		KindSlurm: validSlurm(),
	}
	var kinds []Kind
	for _, k := range Kinds() {
		kinds = append(kinds, k.Kind)
		if k.Summary == "" || k.Check == nil || k.Open == nil || k.Prepare == nil || k.Probe == nil || k.State == nil || k.Ship == nil {
			t.Errorf("row %s is not fully wired: %+v", k.Kind, k)
			continue
		}
		p, ok := minimal[k.Kind]
		if !ok {
			t.Errorf("row %s has no minimal profile in this test", k.Kind)
			continue
		}
		m, err := Open(p, Options{SelfExe: "/bin/true"})
		if err != nil || m.ID() != p.ID {
			t.Errorf("Open(%s) = %v, %v", k.Kind, m, err)
		}
	}
	if !slices.Contains(kinds, KindLocal) || !slices.Contains(kinds, KindSSH) {
		t.Errorf("kinds %v lack local or ssh", kinds)
	}
	if _, err := Describe("slurmish"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Describe of an unknown kind = %v", err)
	}
}
