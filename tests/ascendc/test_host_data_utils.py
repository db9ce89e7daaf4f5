"""ReadFile / WriteFile of the examples' data_utils.h (ascend_sim/ascendc/host/data_utils.py)."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.ascendc.cxx import Ref
from ascend_sim.ascendc.host.pointers import HostPtr
from ascend_sim.ascendc.host import acl
from ascend_sim.ascendc.host.acl import AclError
from ascend_sim.ascendc.host.data_utils import ReadFile, WriteFile


def test_round_trip_relative_to_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "input").mkdir()
    data = np.arange(40, dtype=np.float32)
    data.tofile(tmp_path / "input" / "x.bin")
    buf, size = HostPtr(np.zeros(256, np.uint8)), [0]
    assert ReadFile("./input/x.bin", Ref(lambda: size[0], lambda v: size.__setitem__(0, v)), buf, 256) is True
    assert size[0] == 160
    np.testing.assert_array_equal(buf.buf[:160].view(np.float32), data)
    assert WriteFile("out.bin", buf + 8, 16) is True       # 16 bytes from byte 8 of the buffer
    np.testing.assert_array_equal(np.fromfile(tmp_path / "out.bin", np.float32), data[2:6])


def test_failures_print_and_return_false_as_the_examples_do(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    buf = HostPtr(np.zeros(8, np.uint8))
    assert ReadFile("missing.bin", 0, buf, 8) is False
    (tmp_path / "empty.bin").write_bytes(b"")
    assert ReadFile("empty.bin", 0, buf, 8) is False
    (tmp_path / "big.bin").write_bytes(bytes(9))
    assert ReadFile("big.bin", 0, buf, 8) is False
    assert WriteFile("x.bin", None, 8) is False
    out = capsys.readouterr().out.splitlines()
    assert out == ["[ERROR]  failed to get file", "[ERROR]  file size is 0",
                   "[ERROR]  file size is larger than buffer size", "[ERROR]  Write file failed. buffer is nullptr"]


def test_device_memory_and_overruns_are_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.bin").write_bytes(bytes(64))
    with pytest.raises(AclError) as e:           # bufferSize claims 64 bytes, the buffer holds 32
        ReadFile("x.bin", 0, HostPtr(np.zeros(32, np.uint8)), 64)
    assert e.value.kind == "out-of-bounds" and "32 bytes past its end" in str(e.value)
    with acl.session():
        acl.aclrtSetDevice(0)
        p = [None]
        acl.aclrtMalloc(Ref(lambda: p[0], lambda v: p.__setitem__(0, v)), 64, 0)
        with pytest.raises(AclError) as e:
            WriteFile("y.bin", p[0], 64)
        assert e.value.kind == "host-deref"
