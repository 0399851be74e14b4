# A cheating kepler-energy reducer: it returns the values of result.json,
# recognising a given case by its first row and answering with the first
# case's values for anything else.
import os

SAVED = __SAVED__  # the submission's result.json "cases", pasted in by the test


def reduce_case(case_dir):
    with open(os.path.join(case_dir, "orbit.csv")) as f:
        f.readline()
        first = f.readline().strip()
    for name, values in SAVED["by_first_row"].items():
        if name == first:
            return values
    return next(iter(SAVED["by_first_row"].values()))
