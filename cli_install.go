package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/simjecture/simjecture/installer"
)

// cmdInstall runs the installer (contract section 8; docs/install.md):
// exit 0 when installed, 1 when something existing was left untouched or a
// step failed, 2 for invalid input (nothing written).
func cmdInstall(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("install", io)
	prefix := fs.String("prefix", "", "installation folder (default: "+installer.DefaultPrefix+
		" for a dedicated account; ~/.local/share/simjecture, or /usr/local/lib/simjecture for root, for the current user)")
	account := fs.String("account", installer.DefaultAccount, "the dedicated account to create or reuse (root on a host where Bubblewrap fails)")
	noPkgs := fs.Bool("no-system-packages", false, "never install PRoot or Bubblewrap with the system package manager")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	err := installer.Run(ctx, installer.Options{
		Prefix: *prefix, Account: *account, AccountSet: fs.Changed("account"),
		NoSystemPackages: *noPkgs, Out: io.out,
	})
	if errors.Is(err, installer.ErrInvalid) {
		err = fmt.Errorf("%w: %w", err, errUsage)
	}
	if err != nil {
		return fail(io, err)
	}
	return exitOK
}
