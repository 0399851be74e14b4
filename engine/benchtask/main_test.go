package benchtask

import (
	"os"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

// The test binary doubles as the sandbox helper, as the real binary does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		os.Exit(sandbox.HelperMain(os.Args[2:]))
	}
	code := m.Run()
	sandbox.CloseRunners()
	os.Exit(code)
}
