"""The aicore-exception report (AI Core 异常) a kernel fault writes to the plog, besides the KernelError.

On hardware a faulting kernel leaves no Python traceback: the runtime writes an ``EZ9999`` block to the plog
("aicore error exception, core id is 23, error code = 0x800000, dump info: pc start ..." / "errorStr: The DDR
address of the MTE instruction is out of range." / "Kernel task happen error, retCode=0x26, [aicore exception]"),
and the host call returns 507015. ``report`` writes the same shape for a simulated fault, naming the core, the
error code, the failing instruction (the learner's call and its line) and the sanitizer rule.

Provenance: the GM out-of-bounds lines above are quoted from public reports [EST]: the vLLM Ascend issue
https://github.com/vllm-project/vllm-ascend/issues/3263 and https://github.com/hw-native-sys/PTOAS/pull/426
(error log excerpts). The other codes and errorStr texts are the simulator's own
([EST]): rules such as racecheck or initcheck never trap on hardware (the kernel computes wrong numbers), so
their report says so.
"""
from __future__ import annotations

from ascend_sim.engine import errors as E
from ascend_sim.engine.errors import format_site

__all__ = ["AICORE_CODES", "code_for", "report_lines"]

#: KernelError class name -> (error code, errorStr, host return kind). The first entry is the documented one.
AICORE_CODES: dict[str, tuple[str, str, str]] = {
    "OutOfBoundsError/GM": ("0x800000", "The DDR address of the MTE instruction is out of range.",
                            "retCode=0x26, [aicore exception]"),
    "OutOfBoundsError": ("0x40", "The UB address accessed by the instruction is out of range. [simulator code]",
                         "retCode=0x26, [aicore exception]"),
    "AlignmentError": ("0x8", "The address of the instruction is not aligned. [simulator code]",
                       "retCode=0x26, [aicore exception]"),
    "DeadlockError": ("0x0", "The AI Core did not finish in time: every unfinished block is waiting. "
                      "[simulator code]", "retCode=0x25, [aicore timeout]"),
}
_NO_TRAP = ("0x0", "No trap on hardware: the kernel would run on and compute wrong numbers; found by the "
                   "simulator's {check} (mssanitizer's check of the same name).", "retCode=0x0, [no exception]")


def code_for(err: E.KernelError) -> tuple[str, str, str]:
    """(error code, errorStr, host return kind) for a KernelError."""
    name = type(err).__name__
    if name == "OutOfBoundsError" and "GM buffer" in err.rule_message:
        return AICORE_CODES["OutOfBoundsError/GM"]
    if name in AICORE_CODES:
        return AICORE_CODES[name]
    code, text, ret = _NO_TRAP
    return code, text.format(check=err.check), ret


def report_lines(err: E.KernelError, kernel: str, launch_id: int, core: tuple | None) -> list[str]:
    """The EZ9999 report of ``err``; ``core`` is (block index, core type, API calls issued) or None."""
    code, text, ret = code_for(err)
    core_id, ctype, pc = core if core is not None else (-1, "?", 0)
    rule = err.rule_message.splitlines()[0]
    return [
        f"launch={launch_id} EZ9999: Inner Error!",
        f"launch={launch_id} aicore error exception, core id is {core_id} ({ctype}), error code = {code}, "
        f"dump info: kernel {kernel}, {pc} API calls issued before the fault",
        f"launch={launch_id} errorStr: {text}",
        f"launch={launch_id} the failing instruction: {format_site(err.site)}",
        f"launch={launch_id} [{err.check}] {type(err).__name__}: {rule}",
        f"launch={launch_id} fix: {err.fix}" if err.fix else f"launch={launch_id} fix: see docs/troubleshooting.md",
        f"launch={launch_id} Kernel task happen error, {ret}.",
    ]
