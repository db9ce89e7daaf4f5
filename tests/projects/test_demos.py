"""The functions the Module 5 lesson calls: figures with the documented keys, a matplotlib figure, real numbers."""
import numpy as np
import pytest

pytest.importorskip("skimage")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_inspection_demo_on_a_small_frame():
    from ascend_sim.projects import inspection
    d = inspection.run_demo(height=240, width=384)
    assert d["same_mask"] and d["fused_us"] < d["naive_us"] and d["speedup"] == d["naive_us"] / d["fused_us"]
    assert d["naive_gm_bytes"] > d["fused_gm_bytes"] > 240 * 384       # at least the frame was read
    assert d["defects"] == 3 and 0.0 <= d["precision"] <= 1.0 and 0.0 <= d["recall"] <= 1.0
    assert d["source_ms"] == (17.0, 9.0) and "%" in d["fused_bound"] and len(d["naive_passes"]) == 3
    assert d["figure"].axes and d["frame"] == "240x384"


def test_medical_demo():
    from ascend_sim.projects import medical
    m = medical.run_demo()
    assert set(m["times_us"]) == {"gray", "gauss5", "threshold", "erode3", "dilate3"}
    assert all(v > 0 for v in m["times_us"].values()) and m["total_us"] == pytest.approx(sum(m["times_us"].values()))
    assert 0.8 < m["dice"] < 1.0 and 0.0 < m["otsu_threshold"] < 0.5 and m["figure"].axes


def test_a_wrong_stain_vector_is_caught():
    from ascend_sim.projects.medical_kernels import MedTiling, gray_kernel, launch_on, ref_gray, unpack
    rgb = np.random.default_rng(1).integers(0, 256, (16, 128, 3), dtype=np.uint8)
    right = MedTiling(16, 128)
    wrong = MedTiling(16, 128, weights=right.weights[::-1])          # channels in BGR order: a classic bug
    buf, _ = launch_on(gray_kernel, np.ascontiguousarray(np.moveaxis(rgb, -1, 0)), wrong)
    assert not np.array_equal(unpack(buf, wrong), ref_gray(rgb, right))
