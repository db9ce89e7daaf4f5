"""The conformance kernels share tests/sim's helpers (kernels_util)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
