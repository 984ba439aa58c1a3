#!/usr/bin/env python3
"""ctest's way into cases.py (usage as cases.py's): imported rather than run as a script,
so that Python keeps its bytecode (in the build tree: PYTHONPYCACHEPREFIX) instead of
compiling its 5,000 lines again at the start of every case, 90 ms of CPU each."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

sys.exit(cases.main())
