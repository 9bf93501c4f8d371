"""Test setup: make ``python/`` importable when tcplab is not installed."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, "python")
if PY not in sys.path:
    sys.path.insert(0, PY)
