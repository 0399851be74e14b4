package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Scripts run by python3 on a finished study (argv[1] is the campaign):
// each edits the record the way an adversary who knows its format would,
// keeping every hash chain consistent where it can.
const (
	// forgeRoot makes root supported, appends the record event the harness
	// would have written (chain hash recomputed) and points report.json at
	// the new head.
	forgeRoot = `
import hashlib, json, sqlite3, sys, os
dir = sys.argv[1]
db = sqlite3.connect(os.path.join(dir, "simjecture.db"))
(doc,) = db.execute("select claim_json from claims where id = 'root'").fetchone()
claim = json.loads(doc)
if claim["status"] == "supported":
    sys.exit("root is supported already")
claim["status"] = "supported"
doc = json.dumps(claim, separators=(",", ":"), ensure_ascii=False)
db.execute("update claims set status = 'supported', claim_json = ? where id = 'root'", (doc,))
payload = json.dumps({"kind": "claims", "id": "root", "status": "supported",
                      "sha256": hashlib.sha256(doc.encode()).hexdigest()}, separators=(",", ":"))
seq, prev = db.execute("select seq, hash from events order by seq desc limit 1").fetchone()
seq, at = seq + 1, "2030-01-01T00:00:00Z"
h = hashlib.sha256()
for part in (prev, str(seq), at, "record", payload):
    h.update(part.encode() + b"\0")
db.execute("insert into events (seq, time, type, payload, prev_hash, hash) values (?, ?, 'record', ?, ?, ?)",
           (seq, at, payload, prev, h.hexdigest()))
db.commit()
rep = json.load(open(os.path.join(dir, "report.json")))
rep["event_head"] = {"seq": seq, "hash": h.hexdigest()}
json.dump(rep, open(os.path.join(dir, "report.json"), "w"))
`
	// dropNewest deletes the newest events, and report.json, which anchors them.
	dropNewest = `
import sqlite3, sys, os
db = sqlite3.connect(os.path.join(sys.argv[1], "simjecture.db"))
db.execute("drop trigger if exists events_no_delete")
n = db.execute("delete from events where seq > (select max(seq) - 3 from events)").rowcount
db.commit()
os.remove(os.path.join(sys.argv[1], "report.json"))
sys.exit(0 if n == 3 else "deleted %d events" % n)
`
	// corruptPage overwrites the header of the events table's root page.
	corruptPage = `
import sqlite3, sys, os
path = os.path.join(sys.argv[1], "simjecture.db")
db = sqlite3.connect(path)
(root,) = db.execute("select rootpage from sqlite_master where name = 'events'").fetchone()
(size,) = db.execute("pragma page_size").fetchone()
db.execute("pragma wal_checkpoint(truncate)")
db.close()
with open(path, "r+b") as f:
    f.seek((root - 1) * size)
    f.write(b"\xff" * 64)
`
	// forgeNote adds a note behind the harness's back, with no event.
	forgeNote = `
import sqlite3, sys, os
db = sqlite3.connect(os.path.join(sys.argv[1], "simjecture.db"))
db.execute("""insert into notes (note_json, kind) values ('{"statement":"forged"}', '')""")
db.commit()
`
	// changeContract edits the frozen contract's completion policy.
	changeContract = `
import json, sqlite3, sys, os
db = sqlite3.connect(os.path.join(sys.argv[1], "simjecture.db"))
(doc,) = db.execute("select contract_json from study").fetchone()
k = json.loads(doc)
k["completion_policy"] = "answer" if k["completion_policy"] != "answer" else "repair"
db.execute("update study set contract_json = ?", (json.dumps(k, separators=(",", ":")),))
db.commit()
`
)

// pyTamper returns a tamper step that runs script with python3 on the study.
func pyTamper(script, want string) func(t *testing.T, dir string, snap snapshot) string {
	return func(t *testing.T, dir string, _ snapshot) string {
		if out, err := exec.Command("python3", "-c", script, dir).CombinedOutput(); err != nil {
			t.Fatalf("tampering with python3's sqlite3: %v\n%s", err, out)
		}
		return want
	}
}

// editStdoutLog rewrites the kept stdout.log of the first experiment.
func editStdoutLog(t *testing.T, dir string, snap snapshot) string {
	if len(snap.Experiments) == 0 {
		t.Fatal("the demo recorded no experiment")
	}
	path := filepath.Join(snap.Experiments[0].ArtifactDir, "stdout.log")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "a nicer story\n")
	return "stdout.log changed"
}

// reverseVerdicts turns every "supported" of a report (report.json or
// LEDGER.md) of the finished study into "refuted", as the audit did.
func reverseVerdicts(name string) func(t *testing.T, dir string, snap snapshot) string {
	return func(t *testing.T, dir string, _ snapshot) string {
		path := filepath.Join(dir, name)
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), "supported") {
			t.Fatalf("%s says nothing is supported:\n%s", name, body)
		}
		writeFile(t, path, strings.ReplaceAll(string(body), "supported", "refuted"))
		return name + " differs from the record: line "
	}
}
