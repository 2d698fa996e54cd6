"""Test configuration: point the data loaders at the shared benchmark data beside the checkout.

The installed package cannot know where a source checkout's ../shared/datasets is; tests can.
"""

import os
from pathlib import Path

_SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
if _SHARED.is_dir():
    os.environ.setdefault("COMBPRED_DATA", str(_SHARED))
