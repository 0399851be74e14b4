package installer

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// describeOwner renders an owner and mode as "root:simjecture 0750".
func (p *plan) describeOwner(o owner, mode fs.FileMode) string {
	return fmt.Sprintf("%s:%s %04o", p.userName(o.UID), p.groupName(o.GID), mode.Perm())
}

func (p *plan) userName(uid int) string {
	if uid < 0 {
		return p.acct.Name
	}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

func (p *plan) groupName(gid int) string {
	if gid < 0 {
		gid = os.Getgid()
	}
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return strconv.Itoa(gid)
}

// summarize fills the final summary.
func (p *plan) summarize(name string, auto sandbox.Report) {
	s, lay := &p.sum, p.lay
	if p.mode == ModeAccount {
		how := "created now"
		if p.acct.Existed {
			how = "existing"
		}
		s.add("installed for", "the dedicated account %s (uid %d, %s; home %s)", p.acct.Name, p.acct.UID, how, p.acct.Home)
	} else {
		s.add("installed for", "the current user %s (no account created)", p.acct.Name)
	}
	s.add("folder", "%s (%s)", p.prefix, p.describeOwner(lay.Prefix, lay.DirMode))
	s.add("binary", "%s (%s), active as app/current", filepath.Join(p.prefix, appDir, name), p.describeOwner(lay.Binary, lay.BinaryMode))
	s.add("launcher", "%s (%s)", p.launcher, p.describeOwner(lay.Launcher, 0o755))
	s.add("marker", "%s", filepath.Join(p.prefix, MarkerName))
	s.add("auto selects", "%s", orDefault(string(auto.Selected), "nothing available yet"))
	s.add("start with", "%s", p.launcher)
	s.add("undo", "%s", p.undo())
	if p.mode == ModeUser && !onPath(filepath.Dir(p.launcher)) {
		s.warn("%s is not on your PATH; add it or start %s directly", filepath.Dir(p.launcher), p.launcher)
	}
	if p.mode == ModeAccount {
		s.warn("%s", sandbox.WarningCooperative)
	}
}

func (p *plan) undo() string {
	rm := "rm -rf " + shellQuote(p.prefix)
	if !strings.HasPrefix(p.launcher, p.prefix+"/") {
		rm += " " + shellQuote(p.launcher)
	}
	if p.mode == ModeAccount && p.marker != nil && p.marker.AccountCreated {
		return rm + "; userdel -r " + p.acct.Name
	}
	return rm
}

func onPath(dir string) bool {
	return slices.Contains(filepath.SplitList(os.Getenv("PATH")), dir)
}
