"""The spelling translator (ascend_sim/engine/spelling.py): code spans of messages in Python or C++ spelling.

Each pair is the Python spelling a hint or a Fix writes and the C++ a learner of the C++ front end must read
(the C++ forms are those of the official samples: ``SetFlag<HardEvent::MTE2_V>(id)``, ``AllocTensor<half>()``).
"""
import ast
from pathlib import Path

import pytest

from ascend_sim.ascendc.syntax import find_gxx, gxx_check
from ascend_sim.engine.spelling import (CPP, PYTHON, PYTHON_ONLY, language_of, language_of_file, register_cpp_file,
                                        render, to_cpp)

PAIRS = [
    ("SetFlag(HardEvent.MTE2_MTE3, id)", "SetFlag<HardEvent::MTE2_MTE3>(id)"),
    ("SetFlag/WaitFlag(HardEvent.MTE2_V, id)", "SetFlag/WaitFlag<HardEvent::MTE2_V>(id)"),
    ("WaitFlag(MTE2_V, 0)", "WaitFlag<HardEvent::MTE2_V>(0)"),                  # a message's bare event name
    ("PipeBarrier(PIPE_V)", "PipeBarrier<PIPE_V>()"),
    ("pipe.FetchEventID(HardEvent.V_MTE3)", "pipe.FetchEventID<HardEvent::V_MTE3>()"),
    ("inQueueX.AllocTensor(half)", "inQueueX.AllocTensor<half>()"),
    ("zLocal = outQueueZ.DeQue(half)", "zLocal = outQueueZ.DeQue<half>()"),
    ("inQueueX.DeQue()", "inQueueX.DeQue<T>()"),
    ("tbuf.Get(float32)", "tbuf.Get<float>()"),
    ("acc.ReinterpretCast(int32)", "acc.ReinterpretCast<int32_t>()"),
    ("TQue(TPosition.VECIN, BUFFER_NUM)", "TQue<TPosition::VECIN, BUFFER_NUM>"),
    ("TBuf(TPosition.VECCALC)", "TBuf<TPosition::VECCALC>"),
    ("TPosition.VECIN", "TPosition::VECIN"),
    ("for i in range(n)", "for (uint32_t i = 0; i < n; ++i)"),
    ("for k in range(1, n):", "for (uint32_t k = 1; k < n; ++k)"),
    ("range(0, length, tileLength)", "for (uint32_t i = 0; i < length; i += tileLength)"),
    ("range(blockLength // tileLength)", "for (uint32_t i = 0; i < blockLength / tileLength; ++i)"),
    ("blockLength = totalLength // GetBlockNum()", "blockLength = totalLength / GetBlockNum()"),
    ("count = min(tileLength, length - offset)", "count = (tileLength < length - offset ? tileLength : length - offset)"),
    ("@kernel", 'extern "C" __global__ __aicore__'),
    ("@kernel(core='AIC')", "__global__ __cube__"),
    ('@kernel(core="MIX")', "__global__ __mix__(1, 2)"),
    ("self.wv[i] if ok and not done else None", "wv[i] if ok && !done else nullptr"),
    ("DataCopy(zGm[i * tileLength], zLocal, tileLength)", "DataCopy(zGm[i * tileLength], zLocal, tileLength)"),
    ("pipe.InitBuffer(que, num, bytes)", "pipe.InitBuffer(que, num, bytes)"),
    ("Get(x)", "Get(x)"),                       # not an element type: left alone
    ("LocalTensor[half](TPosition.VECCALC, 0, 1024)", "LocalTensor<half>(TPosition::VECCALC, 0, 1024)"),
    ("MatmulType(TPosition.GM, CubeFormat.ND, float32)", "MatmulType<TPosition::GM, CubeFormat::ND, float>"),
    # the parameter structs are aggregates (kernel_operator.h): braces, as parentheses do not initialise them in C++17
    ("FixpipeParamsV220(nb, M, M, N, False, QuantMode_t.F322F16)",
     "FixpipeParamsV220{nb, M, M, N, false, QuantMode_t::F322F16}"),
    ("Max(dst, v, v[16], 128, repeats, BinaryRepeatParams(1, 2, 2, 8, 16, 16))",
     "Max(dst, v, v[16], 128, repeats, BinaryRepeatParams{1, 2, 2, 8, 16, 16})"),
    ("Mmad(c1, a2, b2, MmadParams(M, nb, baseK, 0, False, k0 == 0))",
     "Mmad(c1, a2, b2, MmadParams{M, nb, baseK, 0, false, k0 == 0})"),
    ("LoadData2DParams(0, baseK // 16, M // 16, 0, 0, True, 0)", "LoadData2DParams{0, baseK / 16, M / 16, 0, 0, true, 0}"),
    ("DataCopyPadExtParams(False, 0, 0, 0)", "DataCopyPadExtParams<T>{false, 0, 0, 0}"),     # a class template
    ("DataCopyExtParams(isPad=True)", "DataCopyExtParams(isPad=true)"),     # keyword arguments: the writer gives C++
    ("range(GetBlockIdx(), tiling.planes, GetBlockNum())",
     "for (uint32_t i = GetBlockIdx(); i < tiling.planes; i += GetBlockNum())"),
]


@pytest.mark.parametrize("python, cpp", PAIRS)
def test_to_cpp_spells_each_python_form_as_the_official_samples_do(python, cpp):
    assert to_cpp(python) == cpp


def test_render_drops_the_marks_for_python_and_translates_only_marked_spans_for_cpp():
    text = "loop with «range(0, n, t)», not range(0, n, t); then «que.DeQue(half)»."
    assert render(text, PYTHON) == "loop with range(0, n, t), not range(0, n, t); then que.DeQue(half)."
    assert render(text, CPP) == ("loop with for (uint32_t i = 0; i < n; i += t), not range(0, n, t); "
                                 "then que.DeQue<half>().")


def test_a_span_with_both_spellings_shows_the_one_of_the_language():
    text = "pad with «DataCopyPadExtParams(False, 0, 0, 0)|DataCopyPadExtParams<half>{false, 0, 0, 0}»"
    assert render(text, PYTHON) == "pad with DataCopyPadExtParams(False, 0, 0, 0)"
    assert render(text, CPP) == "pad with DataCopyPadExtParams<half>{false, 0, 0, 0}"


def test_text_without_marks_is_returned_unchanged_in_both_languages():
    text = "a // b and range(n): prose is never translated"
    assert render(text, PYTHON) is text and render(text, CPP) is text


def test_the_language_of_a_file_and_of_a_kernel():
    assert language_of_file("/tmp/add_custom.cpp") == CPP and language_of_file("<ascendc:test_spelling>") == PYTHON
    register_cpp_file("<ascendc:test_spelling>")
    assert language_of_file("<ascendc:test_spelling>") == CPP
    assert language_of_file("/tmp/cell.py") == PYTHON and language_of_file(None) == PYTHON

    class K:
        source_language = CPP
    assert language_of(K()) == CPP and language_of(object()) == PYTHON


# ----------------------------------------------------------------------------- every Fix text, read as C++
ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "x0"      # a value an f-string fills in at run time (a name, a number): a word, as it reads


def _literal(node: ast.expr) -> str:
    """The text of a ``fix=`` argument as it reads: its literal parts, each computed part a placeholder."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else PLACEHOLDER for v in node.values)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) + _literal(node.right)
    if isinstance(node, ast.BoolOp):        # fix=fix or "default": each alternative
        return " / ".join(_literal(v) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _literal(node.body) + " / " + _literal(node.orelse)
    return PLACEHOLDER


def _fix_texts() -> list[tuple[str, str]]:
    """(file:line, text) of every ``fix=`` keyword argument in ascend_sim/api and ascend_sim/engine."""
    out = []
    for package in ("api", "engine"):
        for path in sorted((ROOT / "ascend_sim" / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.keyword) and node.arg == "fix":
                    out.append((f"{path.relative_to(ROOT)}:{node.value.lineno}", _literal(node.value)))
    return out


def test_the_scan_finds_the_fix_texts():
    texts = dict(_fix_texts())
    assert len(texts) > 300
    assert any("«FixpipeParamsV220(nSize, mSize, srcStride, dstStride, ...)»" in t for t in texts.values())


def test_no_fix_text_shows_python_spelling_to_a_cpp_learner():
    """A C++ kernel's error renders its Fix in C++: no span left in Python spelling (mark it «...»)."""
    bad = [f"{where}: {render(text, CPP)}" for where, text in _fix_texts() if PYTHON_ONLY.search(render(text, CPP))]
    assert not bad, "mark the code span «...» (or give its C++ after |):\n" + "\n".join(bad)


STRUCTS = ["MmadParams(M, N, K, 0, False, k0 == 0)", "FixpipeParamsV220(N, M, M, N, False, QuantMode_t.F322F16)",
           "BinaryRepeatParams(1, 2, 2, 8, 16, 16)", "LoadData2DParams(0, 4, 2, 0, 0, True, 0)",
           "Nd2NzParams(1, M, K, 0, K, M, 1, 0)", "DataCopyExtParams(1, 64, 0, 0, 0)"]


def _function(body: list[str]) -> str:
    lines = "\n".join(f"    auto v{i} = {code};" for i, code in enumerate(body))
    return ('#include "kernel_operator.h"\nusing namespace AscendC;\n'
            f"void f(uint16_t M, uint16_t N, uint16_t K, uint32_t k0)\n{{\n    using T = half;\n{lines}\n}}\n")


@pytest.mark.skipif(find_gxx() is None, reason="g++ is not installed")
def test_the_cpp_spelling_of_the_parameter_structs_compiles_and_the_python_one_does_not():
    """The brace form to_cpp writes passes g++ -std=c++17 against kernel_operator.h; the parentheses do not."""
    body = [to_cpp(code) for code in STRUCTS] + ["DataCopyPadExtParams<T>{false, 0, 0, 0}"]
    assert gxx_check(_function(body), "structs.cpp") == []
    for code in STRUCTS:
        assert gxx_check(_function([code.replace("False", "false").replace("True", "true").replace(".", "::")]),
                         "parens.cpp"), f"{code}: parentheses do not initialise an aggregate in C++17"
