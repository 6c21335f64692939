import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def x64():
    """Tenzr with jax_enable_x64 for one test: Python numbers and the default dtypes are
    64-bit, as in JAX with it."""
    import tenzr as tz

    tz.config.update("jax_enable_x64", True)
    yield
    tz.config.update("jax_enable_x64", False)


def pytest_configure(config):
    # Compile-cache isolation: every test session starts with an empty on-disk cache.
    import os
    import tempfile

    os.environ["TENZR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tenzr-cache-")


# The longest files first: `--dist loadfile` hands whole files to the two workers in
# collection order, so a long file collected last (the Vulkan op tables sort late) kept one
# worker busy alone at the end. Files not named keep their order after these.
LONGEST_FIRST = ("test_ops_grad.py", "test_ops_forward.py", "test_targets_vulkan.py", "test_targets_cuda.py",
                 "test_docs.py", "test_tools_fuzz.py", "test_fuzz.py", "test_api_numpy.py")


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
