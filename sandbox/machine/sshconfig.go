package machine

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sshConfigFiles are the files the system ssh client reads as its
// configuration besides ~/.ssh/config itself, and the files and programs
// they name: every file an Include names (followed to maxIncludeDepth,
// relative names under ~/.ssh for the user's files and /etc/ssh for the
// system's), the program of each ProxyCommand, KnownHostsCommand and
// LocalCommand, and each IdentityFile, CertificateFile, UserKnownHostsFile
// and GlobalKnownHostsFile. An agent that could rewrite one of them would
// steer the supervisor's ssh as surely as through ~/.ssh/config. Paths
// with ssh's %-tokens, and names that are not paths, are left out; a
// program named by PATH is taken as PATH finds it now.
func sshConfigFiles(home string) (files, includes []string) {
	r := sshConfigReader{home: home}
	r.read(filepath.Join(home, ".ssh", "config"), false, 0)
	r.read("/etc/ssh/ssh_config", true, 0)
	return r.out, r.includes
}

// maxIncludeDepth is how deep Include is followed (ssh itself stops at 16).
const maxIncludeDepth = 16

type sshConfigReader struct {
	home     string
	out      []string
	includes []string // every Include pattern, absolute: what it matches may not grow
	seen     []string
}

func (r *sshConfigReader) add(p string) {
	if p != "" && filepath.IsAbs(p) && !slices.Contains(r.out, p) {
		r.out = append(r.out, p)
	}
}

// read reads one configuration file (system: under /etc/ssh).
func (r *sshConfigReader) read(path string, system bool, depth int) {
	if depth > maxIncludeDepth || slices.Contains(r.seen, path) {
		return
	}
	r.seen = append(r.seen, path)
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, args := sshConfigLine(sc.Text())
		switch key {
		case "include":
			for _, a := range args {
				r.include(a, system, depth)
			}
		case "proxycommand", "knownhostscommand", "localcommand":
			r.command(args)
		case "match":
			for i, a := range args {
				if strings.EqualFold(a, "exec") && i+1 < len(args) {
					r.command(strings.Fields(args[i+1]))
				}
			}
		case "identityfile", "certificatefile", "userknownhostsfile", "globalknownhostsfile", "revokedhostkeys",
			"identityagent", "securitykeyprovider", "pkcs11provider":
			for _, a := range args {
				r.add(r.path(a))
			}
		}
	}
}

// command pins what a command line runs: its program (a leading exec
// skipped) and every other word that is a path (a script it hands over to).
func (r *sshConfigReader) command(words []string) {
	if len(words) > 0 && words[0] == "exec" {
		words = words[1:]
	}
	if len(words) == 0 {
		return
	}
	r.add(r.program(words[0]))
	for _, w := range words[1:] {
		r.add(r.path(w))
	}
}

// include reads the files an Include argument names.
func (r *sshConfigReader) include(arg string, system bool, depth int) {
	p := r.path(arg)
	if p == "" && !strings.Contains(arg, "%") {
		base := filepath.Join(r.home, ".ssh")
		if system {
			base = "/etc/ssh"
		}
		p = filepath.Join(base, arg)
	}
	if p == "" {
		return
	}
	if !slices.Contains(r.includes, p) {
		r.includes = append(r.includes, p)
	}
	matches, _ := filepath.Glob(p)
	for _, m := range matches {
		r.add(m)
		r.read(m, system, depth+1)
	}
}

// path is a file argument as ssh reads it (~ expanded), "" for one with
// %-tokens or that is relative.
func (r *sshConfigReader) path(a string) string {
	if strings.Contains(a, "%") || strings.Contains(a, "${") {
		return ""
	}
	if rest, ok := strings.CutPrefix(a, "~/"); ok {
		a = filepath.Join(r.home, rest)
	}
	if !filepath.IsAbs(a) {
		return ""
	}
	return filepath.Clean(a)
}

// program is the file a command's first word runs.
func (r *sshConfigReader) program(word string) string {
	if p := r.path(word); p != "" {
		return p
	}
	if strings.ContainsAny(word, "/%$") || word == "none" {
		return ""
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(d, word); filepath.IsAbs(p) {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
	}
	return ""
}

// sshConfigLine splits a configuration line into its keyword (lower case)
// and arguments ("key value", "key=value", quoted arguments); "" for a
// comment or a blank line.
func sshConfigLine(line string) (string, []string) {
	line = strings.TrimSpace(strings.ReplaceAll(line, "\t", " "))
	if line == "" || strings.HasPrefix(line, "#") {
		return "", nil
	}
	if eq, sp := strings.IndexByte(line, '='), strings.IndexByte(line, ' '); eq > 0 && (sp < 0 || eq < sp) {
		line = line[:eq] + " " + line[eq+1:] // key=value
	}
	key, rest, _ := strings.Cut(line, " ")
	if t := strings.TrimSpace(rest); strings.HasPrefix(t, "=") { // key = value
		rest = t[1:]
	}
	var args []string
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				args = append(args, rest[1:])
				break
			}
			args, rest = append(args, rest[1:end+1]), rest[end+2:]
			continue
		}
		word, tail, _ := strings.Cut(rest, " ")
		args, rest = append(args, strings.TrimSpace(word)), tail
	}
	return strings.ToLower(key), args
}
