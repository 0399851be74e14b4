package main

import (
	"fmt"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/provider/api"
)

// apiAgent builds the OpenAI-compatible API agent of a study from its
// connection file, which is checked again at every start (mode 0600, a
// usable base_url, a key); a bad file is invalid input (exit 2).
func apiAgent(k engine.Contract) (provider.Agent, error) {
	cfg, err := api.LoadConfig(k.ProviderConfig)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, engine.ErrInvalid)
	}
	return api.New(cfg), nil
}

// checkAPIConfig refuses an unusable connection file before a study is
// created, so nothing is written (exit 2).
func checkAPIConfig(path string) error {
	if err := api.CheckConfig(path); err != nil {
		return fmt.Errorf("%w: %w", err, engine.ErrInvalid)
	}
	return nil
}
