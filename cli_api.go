package main

import (
	"fmt"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider"
)

// apiAgent builds the OpenAI-compatible API agent of a study.
func apiAgent(k engine.Contract) (provider.Agent, error) {
	return nil, fmt.Errorf("the api backend is not in this build yet: %w", engine.ErrInvalid)
}
