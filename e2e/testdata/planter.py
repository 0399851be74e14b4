#!/usr/bin/env python3
"""A command agent whose worker plants a python3 earlier on PATH, for a
later supervisor to pin (e2e/enclose_test.go TestResumeSeesAProgramPlanted).

Worker turn 1 writes a python3 into the folder named in plant.txt next to
this script (a folder the test puts on PATH before the system's, in /tmp,
which stays writable to an enclosed agent): it would leave the marker the
test names in marker.txt and go on as the real python3. Then it pauses the
study, so no further launch of that supervisor sees the new python3. Any
later turn pauses the study again.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

sys.stdin.read()
if os.environ.get("SIMJECTURE_TURN") == "1" and os.environ.get("SIMJECTURE_ROLE") != "reviewer":
    folder = open(os.path.join(HERE, "plant.txt")).read().strip()
    marker = open(os.path.join(HERE, "marker.txt")).read().strip()
    planted = os.path.join(folder, "python3")
    with open(planted, "w") as f:
        f.write("#!/bin/sh\necho planted > %s\nexec %s \"$@\"\n" % (marker, sys.executable))
    os.chmod(planted, 0o755)
subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", os.environ["SIMJECTURE_STUDY"]], capture_output=True)
