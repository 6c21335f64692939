import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    # Compile-cache isolation: every test session starts with an empty on-disk cache.
    import os
    import tempfile

    os.environ["TENZR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tenzr-cache-")
