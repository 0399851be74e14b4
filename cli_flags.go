package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
)

// Flag parsing shared by every command: one flag set per command, writing
// its usage to stderr, and one way to parse it.

// newFlagSet is the flag set of command name; --help prints its usage to stderr.
func newFlagSet(name string, io stdio) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprintf(io.err, "Usage of simjecture %s:\n%s", name, fs.FlagUsages())
	}
	return fs
}

// campaignFlag adds --campaign, defaulting to $SIMJECTURE_STUDY.
func campaignFlag(fs *pflag.FlagSet) *string {
	return fs.String("campaign", os.Getenv("SIMJECTURE_STUDY"), "campaign folder (required)")
}

// parseArgs parses args into fs and refuses more than maxArgs positional
// arguments. After --help (its usage printed) it returns pflag.ErrHelp;
// any other error wraps errUsage.
func parseArgs(fs *pflag.FlagSet, args []string, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", err, errUsage)
	}
	if fs.NArg() > maxArgs {
		return fmt.Errorf("unexpected argument %q: %w", fs.Arg(maxArgs), errUsage)
	}
	return nil
}

// parse is parseArgs for a command: done reports that the command must
// return code at once, exitOK after --help, exitInvalid after a usage error
// (printed as one line on stderr).
func parse(fs *pflag.FlagSet, args []string, maxArgs int, io stdio) (code int, done bool) {
	err := parseArgs(fs, args, maxArgs)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, pflag.ErrHelp):
		return exitOK, true
	}
	return fail(io, err), true
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// checkReadableFile refuses a --identity-file or --known-hosts that ssh
// could not read: missing, a folder or other non-file, or unreadable.
func checkReadableFile(flag, path string) error {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--%s %s: does not exist: %w", flag, path, errUsage)
	case err != nil:
		return fmt.Errorf("--%s %s: %v: %w", flag, path, unwrapPathError(err), errUsage)
	case info.IsDir():
		return fmt.Errorf("--%s %s: is a folder, not a file: %w", flag, path, errUsage)
	case !info.Mode().IsRegular():
		return fmt.Errorf("--%s %s: is not a regular file: %w", flag, path, errUsage)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--%s %s: cannot read it: %v: %w", flag, path, unwrapPathError(err), errUsage)
	}
	return f.Close()
}

// unwrapPathError is the cause of a *os.PathError, which already names
// the path the message names.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
