"""benchmarks/run_official_samples.py on a planted example folder of our own (the official ones are not in the repo).

The folder has the asc-devkit layout: an .asc program, scripts/gen_data.py, scripts/verify_result.py and a README
whose shell lines give the scripts' arguments and the scenario number.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_official_samples", ROOT / "benchmarks" / "run_official_samples.py")
runner = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = runner            # dataclasses look their module up while the class is made
_spec.loader.exec_module(runner)

PROGRAM = """\
#include "acl/acl.h"
#include "kernel_operator.h"

__global__ __vector__ void fill_custom(__gm__ float* x)
{
    AscendC::GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(x, 64);
}

int32_t main(int32_t argc, char* argv[])
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    float* x = nullptr;
    aclrtMalloc((void**)&x, 256, ACL_MEM_MALLOC_HUGE_FIRST);
    fill_custom<<<SCENARIO_NUM, nullptr, stream>>>(x);
    aclrtSynchronizeStream(stream);
    aclrtFree(x);
    return 0;
}
"""

README = """\
# planted example
```bash
  SCENARIO_NUM=2  # the scenario
  python3 ../scripts/gen_data.py -scenarioNum=$SCENARIO_NUM   # inputs
  ./demo
  python3 ../scripts/verify_result.py marker.txt -scenarioNum=$SCENARIO_NUM  # check
```
"""


def _devkit(tmp_path: Path, verify_ok: bool) -> Path:
    folder = tmp_path / "kit" / runner.EX / "planted" / "fill"
    (folder / "scripts").mkdir(parents=True)
    (folder / "fill.asc").write_text(PROGRAM)
    (folder / "README.md").write_text(README)
    (folder / "scripts" / "gen_data.py").write_text(
        "import sys\nopen('marker.txt', 'w').write(' '.join(sys.argv[1:]))\n")
    (folder / "scripts" / "verify_result.py").write_text(
        "import sys\ntext = open(sys.argv[1]).read()\nprint('got', text, sys.argv[2])\n"
        f"sys.exit(0 if {verify_ok!r} and text == '-scenarioNum=2' == sys.argv[2] else 1)\n")
    return tmp_path / "kit"


def test_readme_commands_give_the_arguments(tmp_path):
    kit = _devkit(tmp_path, True)
    scenario, gen, verify = runner._readme_commands(kit / runner.EX / "planted" / "fill")
    assert (scenario, gen, verify) == ("2", ["-scenarioNum=2"], ["marker.txt", "-scenarioNum=2"])


@pytest.mark.parametrize("verify_ok", [True, False])
def test_a_family_runs_gen_data_the_program_and_verify(tmp_path, verify_ok):
    row = runner.run_family("planted", "planted/fill", _devkit(tmp_path, verify_ok), timeout=300)
    assert row.file == "planted/fill/fill.asc"
    assert row.cycles and row.cycles.replace(",", "").isdigit()        # launched on SCENARIO_NUM = 2 blocks
    if verify_ok:
        assert (row.verdict, row.stage) == ("pass", "")
    else:
        assert (row.verdict, row.stage) == ("FAIL", "verify") and "got -scenarioNum=2" in row.message
    assert "| planted | `planted/fill/fill.asc` |" in runner.table([row])


def test_a_compile_error_is_the_load_stage_with_its_diagnostic(tmp_path):
    kit = _devkit(tmp_path, True)
    asc = kit / runner.EX / "planted" / "fill" / "fill.asc"
    asc.write_text(PROGRAM.replace("xGm.SetGlobalBuffer(x, 64);", "xGm.NoSuchMethod(x);"))
    row = runner.run_family("planted", "planted/fill", kit, timeout=300)
    assert (row.verdict, row.stage) == ("error", "load") and "fill.asc:7:" in row.message
