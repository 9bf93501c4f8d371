"""Test setup: make ``python/`` importable when tcplab is not installed."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, "python")
try:
    import tcplab  # noqa: F401  (installed, or on PYTHONPATH)
except ImportError:
    sys.path.insert(0, PY)
