package installer

import (
	"errors"
	"slices"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

func TestDebianLike(t *testing.T) {
	cases := []struct {
		osRelease string
		want      bool
	}{
		{"PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n", true},
		{"ID=ubuntu\nID_LIKE=debian\n", true},
		{"ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n", true},
		{"ID=fedora\n", false},
		{"ID=\"rhel\"\nID_LIKE=\"fedora\"\n", false},
		{"NAME=debian-ish\n", false},
		{"", false},
	}
	for _, c := range cases {
		if got := debianLike(c.osRelease); got != c.want {
			t.Errorf("debianLike(%q) = %v, want %v", c.osRelease, got, c.want)
		}
	}
}

func TestMissingPackages(t *testing.T) {
	t.Setenv(sandbox.EnvProot, "")
	cases := []struct {
		name    string
		present []string
		want    []string
	}{
		{"both present", []string{"proot", "bwrap"}, nil},
		{"no proot", []string{"bwrap"}, []string{"proot"}},
		{"neither", nil, []string{"proot", "bubblewrap"}},
	}
	for _, c := range cases {
		look := func(name string) (string, error) {
			if slices.Contains(c.present, name) {
				return "/usr/bin/" + name, nil
			}
			return "", errors.New("not found")
		}
		if got := missingPackages(look); !slices.Equal(got, c.want) {
			t.Errorf("%s: missingPackages = %v, want %v", c.name, got, c.want)
		}
	}
}
