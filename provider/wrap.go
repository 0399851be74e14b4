package provider

// argv is the command line of the turn's agent process: exe and args,
// rewritten by t.Wrap (for this launch's log folder) when it is set.
func (t Turn) argv(exe string, args []string) []string {
	argv := append([]string{exe}, args...)
	if t.Wrap != nil {
		argv = t.Wrap(t.LogDir, argv)
	}
	return argv
}
