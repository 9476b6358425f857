import sys
from pathlib import Path

# use this checkout's package even when another copy is installed
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
