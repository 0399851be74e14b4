package provider

// argv is the command line of the turn's agent process: exe and args,
// rewritten by t.Wrap when it is set.
func (t Turn) argv(exe string, args []string) []string {
	argv := append([]string{exe}, args...)
	if t.Wrap != nil {
		argv = t.Wrap(argv)
	}
	return argv
}
