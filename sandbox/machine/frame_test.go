package machine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFrameRoundTrip: headers and raw data survive the wire; an oversized
// or truncated frame is a protocol error.
func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := newFrameWriter(&buf)
	data := bytes.Repeat([]byte{0, 1, 2, 255}, 1000)
	frames := []frame{{Seq: 1, Op: opHello, Body: body(helloArgs{Protocol: Protocol})}, {Seq: 2, Op: opPut, Data: data, Final: true}}
	for _, f := range frames {
		if err := w.write(f, true); err != nil {
			t.Fatal(err)
		}
	}
	raw := buf.Bytes()
	for _, want := range frames {
		got, err := readFrame(&buf)
		if err != nil || got.Seq != want.Seq || got.Op != want.Op || !bytes.Equal(got.Data, want.Data) || got.Final != want.Final {
			t.Fatalf("readFrame = %+v, %v; want %+v", got, err, want)
		}
	}
	short := bytes.NewReader(raw[:len(raw)-10])
	if _, err := readFrame(short); err != nil {
		t.Fatalf("the first frame of a truncated stream: %v", err)
	}
	if _, err := readFrame(short); !errors.Is(err, ErrProtocol) {
		t.Errorf("a truncated frame = %v, want ErrProtocol", err)
	}
	if _, err := readFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff})); !errors.Is(err, ErrProtocol) {
		t.Errorf("an oversized header = %v, want ErrProtocol", err)
	}
}

// TestSSHArgv: the system ssh runs in batch mode with strict host keys,
// the profile's known-hosts file, as a client of this process's own master
// (never a master itself, nothing persisting) in our 0700 folder; the host
// comes after "--" so it can never be an option.
func TestSSHArgv(t *testing.T) {
	t.Parallel()
	p := validSSH()
	p.KnownHosts, p.IdentityFile, p.RunAs = "/etc/sj/kh", "/etc/sj/id", "sjrun"
	ctl, err := sshTarget{p: p}.controlPath()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(ctl), strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("control socket %s is not named by this process", ctl)
	}
	argv := sshTarget{p: p}.argv(ctl, "true")
	joined := strings.Join(argv, " ")
	for _, want := range []string{"BatchMode=yes", "StrictHostKeyChecking=yes", "UserKnownHostsFile=/etc/sj/kh",
		"ControlMaster=no", "ControlPath=" + ctl, "ServerAliveInterval=", "-i /etc/sj/id", "IdentitiesOnly=yes", "-l alice", "-- example.org true"} {
		if !strings.Contains(joined, want) {
			t.Errorf("ssh argv %q lacks %q", joined, want)
		}
	}
	master := strings.Join(sshTarget{p: p}.masterArgv(ctl), " ")
	for _, want := range []string{"-M -N", "ControlMaster=yes", "ControlPersist=no", "ControlPath=" + ctl, "LocalCommand=echo " + readyLine, "-- example.org"} {
		if !strings.Contains(master, want) {
			t.Errorf("master argv %q lacks %q", master, want)
		}
	}
	if strings.Contains(joined+master, "ControlPersist=6") || strings.Contains(joined, "ControlMaster=auto") {
		t.Errorf("an ssh of ours may fork a persisting master: %q / %q", joined, master)
	}
	i := slices.IndexFunc(argv, func(a string) bool { return strings.HasPrefix(a, "ControlPath=") })
	dir := filepath.Dir(strings.TrimPrefix(argv[i], "ControlPath="))
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("control folder %s: %v %v; want mode 0700", dir, info.Mode(), err)
	}
	serve := sshTarget{p: p}.serveCommand("abc")
	if !strings.Contains(serve, "'/srv/sj/bin/simjecture-abc' worker serve --root '/srv/sj'") || !strings.Contains(serve, "--run-as 'sjrun'") {
		t.Errorf("serve command %q", serve)
	}
}
