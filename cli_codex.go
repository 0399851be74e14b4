package main

import (
	"fmt"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider"
)

// codexAgent builds the Codex CLI agent of a study.
func codexAgent(k engine.Contract) (provider.Agent, error) {
	return nil, fmt.Errorf("the codex backend is not in this build yet: %w", engine.ErrInvalid)
}
