package main

import (
	"fmt"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/provider/codex"
)

// codexAgent builds the Codex CLI agent of a study: k.Executable is the
// codex program resolved when the study was created; the worker and judge
// models travel with each turn (empty: Codex's own default).
func codexAgent(k engine.Contract) (provider.Agent, error) {
	if k.Executable == "" {
		return nil, fmt.Errorf("the codex study records no executable: %w", engine.ErrInvalid)
	}
	return &codex.Agent{Executable: k.Executable}, nil
}
