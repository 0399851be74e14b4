package main

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// cmdInstall runs the installer.
func cmdInstall(_ context.Context, _ []string, io stdio) int {
	return fail(io, fmt.Errorf("the installer is not in this build yet: %w", engine.ErrInvalid))
}
