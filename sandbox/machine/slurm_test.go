package machine

import (
	"errors"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

func validSlurm() Profile {
	return Profile{ID: "hpc", Kind: KindSlurm, Root: "/shared/sj", Partition: "debug", Account: "proj_1",
		ExecutionBackend: sandbox.Bubblewrap, CPUs: 65536, MemoryMB: 16 << 20, MaxJobs: 4}
}

// TestSlurmProfileValidation: a Slurm profile names its flag when a field
// is wrong, the SSH fields of a login node (--host) included.
func TestSlurmProfileValidation(t *testing.T) {
	t.Parallel()
	if err := Validate(validSlurm()); err != nil {
		t.Fatalf("valid profile: %v", err)
	}
	login := validSlurm()
	login.Host, login.Port, login.User = "login1", 22, "alice"
	if err := Validate(login); err != nil {
		t.Fatalf("valid login-node profile: %v", err)
	}
	cases := []struct {
		name, want string
		edit       func(*Profile)
	}{
		{"login host", "--host", func(p *Profile) { p.Host, p.Port = "-oProxyCommand=x", 22 }},
		{"login port", "--port", func(p *Profile) { p.Host = "login1" }},
		{"login user", "--user", func(p *Profile) { p.Host, p.Port, p.User = "login1", 22, "a;b" }},
		{"login run-as", "--run-as", func(p *Profile) { p.Host, p.Port, p.RunAs = "login1", 22, "sj" }},
		{"partition", "--partition", func(p *Profile) { p.Partition = "a b" }},
		{"account", "--account", func(p *Profile) { p.Account = "x;y" }},
		{"root", "--root", func(p *Profile) { p.Root = "shared" }},
		{"jobs", "--max-jobs", func(p *Profile) { p.MaxJobs = 0 }},
		{"backend", "--execution-backend", func(p *Profile) { p.ExecutionBackend = "docker" }},
		{"id local", "this host", func(p *Profile) { p.ID = LocalID }},
	}
	for _, tc := range cases {
		p := validSlurm()
		tc.edit(&p)
		err := Validate(p)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an invalid profile naming %s", tc.name, err, tc.want)
		}
	}
}

// TestSlurmIdentity: partition and account are part of a Slurm worker's
// identity; an SSH profile's hash does not change with the new fields.
func TestSlurmIdentity(t *testing.T) {
	t.Parallel()
	base := validSlurm().IdentityHash()
	for _, edit := range []func(*Profile){func(p *Profile) { p.Partition = "long" }, func(p *Profile) { p.Account = "other" }} {
		p := validSlurm()
		edit(&p)
		if p.IdentityHash() == base {
			t.Errorf("edit %+v kept the identity", p)
		}
	}
	p := validSlurm()
	p.MaxJobs = 9
	if p.IdentityHash() != base {
		t.Error("max-jobs changed the identity")
	}
}
