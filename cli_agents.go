package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/simjecture/simjecture/engine"
)

// fieldFlags is how the CLI names each backend-dependent request field:
// its flag and the argument its help shows.
var fieldFlags = map[engine.Field]struct{ name, arg string }{
	engine.FieldModel:            {"model", ""},
	engine.FieldExecutable:       {"executable", " PATH"},
	engine.FieldProviderConfig:   {"provider-config", " FILE (base_url, api_key; mode 0600)"},
	engine.FieldCampaign:         {"campaign", " DIR"},
	engine.FieldHypothesisFile:   {"hypothesis-file", " FILE"},
	engine.FieldInstructionsFile: {"instructions-file", " FILE"},
	engine.FieldAgentBackend:     {"backend", ""},
	engine.FieldMode:             {"mode", ""},
	engine.FieldCompletionPolicy: {"completion-policy", ""},
	engine.FieldWallSeconds:      {"wall-seconds", ""},
	engine.FieldTurnSeconds:      {"turn-seconds", ""},
	engine.FieldExecutionBackend: {"execution-backend", ""},
	engine.FieldCapabilities:     {"capabilities", ""},
	engine.FieldContinueFrom:     {"continue-from", " DIR"},
	engine.FieldInheritFile:      {"inherit-file", " REL"},
	engine.FieldWorkers:          {"worker", " ID"},
}

// backendHelp is the --backend flag's help, from the agent backend table.
func backendHelp() string {
	return "agent backend: " + strings.Join(engine.AgentBackendNames(), ", ")
}

// inFlags renders an engine.FieldError in the words of the command line,
// naming flags; other errors pass unchanged.
func inFlags(err error) error {
	fe, ok := engine.AsFieldError(err)
	if !ok {
		return err
	}
	f := fieldFlags[fe.Field]
	if fe.Backend == "" {
		return studyFieldInFlags(fe, f.name, f.arg)
	}
	switch fe.Problem {
	case engine.Missing:
		return fmt.Errorf("--backend %s needs --%s%s", fe.Backend, f.name, f.arg)
	case engine.Refused:
		return fmt.Errorf("--backend %s takes no --%s", fe.Backend, f.name)
	case engine.Invalid:
		return fmt.Errorf("--backend %s: --%s: %w", fe.Backend, f.name, fe.Err)
	}
	return errors.New(fe.Error())
}

// studyFieldInFlags renders an error in a field every study has.
func studyFieldInFlags(fe *engine.FieldError, name, arg string) error {
	if fe.Problem == engine.Missing {
		return fmt.Errorf("--%s%s is required", name, arg)
	}
	if fe.With != "" {
		return fmt.Errorf("--%s with --%s: %w", name, fieldFlags[fe.With].name, fe.Err)
	}
	return fmt.Errorf("--%s: %w", name, fe.Err)
}
