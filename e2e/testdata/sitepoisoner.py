#!/usr/bin/env python3
"""A command agent whose worker plants code for its reviewer's Python
(e2e/enclose_test.go TestWorkerCannotPlantPythonStartupCode).

Worker turn 1 writes a usercustomize.py into its Python's user site (in
its home, which stays writable to it): every later start of that Python
would run it, the reviewer's among them, and here it leaves the marker
file the test names in marker.txt next to this script. Any later turn or
review pauses the study.
"""
import os
import site
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

sys.stdin.read()
if os.environ.get("SIMJECTURE_TURN") == "1" and os.environ.get("SIMJECTURE_ROLE") != "reviewer":
    user_site = site.getusersitepackages()
    os.makedirs(user_site, exist_ok=True)
    marker = open(os.path.join(HERE, "marker.txt")).read().strip()
    with open(os.path.join(user_site, "usercustomize.py"), "w") as f:
        f.write("open(%r, 'w').write('planted code ran')\n" % marker)
    sys.exit(0)
subprocess.run([os.environ["SIMJECTURE_BIN"], "pause", "--campaign", os.environ["SIMJECTURE_STUDY"]], capture_output=True)
