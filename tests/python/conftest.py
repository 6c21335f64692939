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


@pytest.fixture
def jax_without_x64():
    """JAX with jax_enable_x64 off for one test, as Tenzr is by default: the modules that
    compare with JAX in 64 bits turn JAX's on as they are imported, for every test after."""
    import jax

    with jax.enable_x64(False):
        yield


@pytest.fixture(autouse=True)
def _close_vulkan_devices():
    """Closes a Vulkan device a test left open. IREE's Vulkan device on Mesa's lavapipe keeps
    two threads polling while it is open: left open by the README's Vulkan example, it took
    two cores from the rest of its worker's tests (test_api_numpy's own CPU time went from
    6 s to 86 s after test_docs, in one process)."""
    yield
    from tenzr import runtime

    if runtime.device_open("vulkan"):
        import tenzr as tz

        tz.clear_caches()


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
