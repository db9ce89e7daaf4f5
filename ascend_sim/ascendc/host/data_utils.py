"""``ReadFile`` / ``WriteFile`` of the examples' ``data_utils.h``: raw binary files relative to the working folder.

They behave as the examples' helpers do: print an ``[ERROR]`` line and return false for a missing, empty or
too large file; ``ReadFile`` stores the file's size in ``fileSize`` (a ``size_t&``). Reading into or writing
from device memory, or past the end of a host buffer, raises :class:`acl.AclError` (on the NPU host this
crashes or corrupts memory).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ascend_sim.ascendc.host.pointers import HostPtr
from ascend_sim.ascendc.host.acl import AclError, DevicePtr

__all__ = ["ReadFile", "WriteFile"]


def _error(text: str) -> bool:
    print(f"[ERROR]  {text}", flush=True)
    return False


def _host_bytes(buffer: Any, call: str, size: int) -> np.ndarray:
    """``size`` bytes of the host buffer as a writable uint8 view (bounds checked)."""
    if isinstance(buffer, DevicePtr):
        raise AclError(f"{call} with a device pointer ({buffer.alloc.name}): host code cannot touch device memory",
                       fix="read into host memory (aclrtMallocHost or a std::vector) and aclrtMemcpy it "
                           "ACL_MEMCPY_HOST_TO_DEVICE", kind="host-deref")
    if isinstance(buffer, HostPtr):
        data, off = buffer.buf, buffer.offset
    elif isinstance(buffer, np.ndarray):
        data, off = buffer.reshape(-1).view(np.uint8), 0
    else:
        raise AclError(f"{call}: the buffer is {type(buffer).__name__} {buffer!r}, not a pointer",
                       fix="pass a host buffer (aclrtMallocHost's pointer or vector.data())", kind="not-a-pointer")
    if off + size > data.size:
        raise AclError(f"{call}: {size:,} bytes at byte {off:,} of a {data.size:,}-byte host buffer run "
                       f"{off + size - data.size:,} bytes past its end",
                       fix="pass the buffer's real byte size (elements * sizeof(T))", kind="out-of-bounds")
    return data[off:off + size]


def ReadFile(filePath: Any, fileSize: Any, buffer: Any, bufferSize: int) -> bool:
    """Read the binary file ``filePath`` into ``buffer`` (at most ``bufferSize`` bytes); its size into ``fileSize``."""
    path = Path(str(filePath))
    if not path.exists():
        return _error("failed to get file")
    if not path.is_file():
        return _error(f"{path} is not a file, please enter a file")
    size = path.stat().st_size
    if size == 0:
        return _error("file size is 0")
    if size > int(bufferSize):
        return _error("file size is larger than buffer size")
    _host_bytes(buffer, "ReadFile", size)[...] = np.fromfile(path, np.uint8)
    if hasattr(fileSize, "set"):
        fileSize.set(size)
    return True


def WriteFile(filePath: Any, buffer: Any, size: int) -> bool:
    """Write ``size`` bytes of ``buffer`` to the binary file ``filePath`` (created or truncated)."""
    if buffer is None:
        return _error("Write file failed. buffer is nullptr")
    data = _host_bytes(buffer, "WriteFile", int(size))
    try:
        Path(str(filePath)).write_bytes(data.tobytes())
    except OSError:
        return _error(f"Open file failed. path = {filePath}")
    return True
