"""The MNIST loaders: IDX files (raw and gzip, with their error messages) and the bundled subset."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.models.datasets import MNIST_DIR_ENV, load_mnist_idx, load_mnist_subset, normalize, write_npz


def write_idx(path: Path, magic: int, array: np.ndarray, compress: bool) -> Path:
    """Write ``array`` (uint8) as an IDX file with the given magic number."""
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in array.shape)
    data = header + array.astype(np.uint8).tobytes()
    if compress:
        path = path.with_name(path.name + ".gz")
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def write_mnist(directory: Path, n_images: int = 3, n_labels: int = 3, compress: bool = True,
                images_magic: int = 2051, labels_magic: int = 2049) -> tuple[np.ndarray, np.ndarray]:
    """Write a tiny t10k image/label pair into ``directory``; return what was written."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n_images, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n_labels, dtype=np.uint8)
    write_idx(directory / "t10k-images-idx3-ubyte", images_magic, images, compress)
    write_idx(directory / "t10k-labels-idx1-ubyte", labels_magic, labels, compress)
    return images, labels


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "raw"])
def test_idx_round_trip(tmp_path: Path, compress: bool) -> None:
    images, labels = write_mnist(tmp_path, compress=compress)
    got_images, got_labels = load_mnist_idx(tmp_path, "t10k")
    assert got_images.dtype == np.uint8 and got_labels.dtype == np.uint8
    np.testing.assert_array_equal(got_images, images)
    np.testing.assert_array_equal(got_labels, labels)


def test_idx_directory_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    images, _ = write_mnist(tmp_path)
    monkeypatch.setenv(MNIST_DIR_ENV, str(tmp_path))
    np.testing.assert_array_equal(load_mnist_idx()[0], images)


def test_idx_bad_magic_names_file_values_and_fix(tmp_path: Path) -> None:
    write_mnist(tmp_path, images_magic=2049)
    with pytest.raises(ValueError) as err:
        load_mnist_idx(tmp_path)
    message = str(err.value)
    for word in ("t10k-images-idx3-ubyte.gz", "magic", "expected 2051", "found 2049", "Fix"):
        assert word in message


def test_idx_count_mismatch(tmp_path: Path) -> None:
    write_mnist(tmp_path, n_images=3, n_labels=2)
    with pytest.raises(ValueError) as err:
        load_mnist_idx(tmp_path)
    message = str(err.value)
    for word in ("3 images", "2 labels", "t10k-labels-idx1-ubyte.gz", "equal counts", "Fix"):
        assert word in message


def test_idx_truncated_file(tmp_path: Path) -> None:
    write_mnist(tmp_path, compress=False)
    path = tmp_path / "t10k-images-idx3-ubyte"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ValueError, match=r"t10k-images-idx3-ubyte.*expected 2368 bytes, found 2358 bytes.*Fix"):
        load_mnist_idx(tmp_path)


def test_idx_missing_file(tmp_path: Path) -> None:
    write_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(FileNotFoundError) as err:
        load_mnist_idx(tmp_path)
    message = str(err.value)
    for word in ("t10k-labels-idx1-ubyte", "not found", "Fix", MNIST_DIR_ENV):
        assert word in message


def test_idx_no_directory_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MNIST_DIR_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match=MNIST_DIR_ENV):
        load_mnist_idx()


def test_idx_unknown_split(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="t10k"):
        load_mnist_idx(tmp_path, "test")


@pytest.mark.parametrize(("split", "count"), [("train", 4000), ("heldout", 1000)])
def test_bundled_subset_shape_and_balance(split: str, count: int) -> None:
    images, labels = load_mnist_subset(split)
    assert images.shape == (count, 28, 28) and images.dtype == np.uint8
    assert labels.shape == (count,) and labels.dtype == np.uint8
    np.testing.assert_array_equal(np.bincount(labels, minlength=10), [count // 10] * 10)
    assert images.max() == 255 and images.min() == 0


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_bundled_subset_prefixes_are_stratified(split: str) -> None:
    """The first 10k images of a split hold k of each digit (the csv is sorted by label: a plain split is not)."""
    labels = load_mnist_subset(split)[1]
    for k in (1, 8, 20, 30, 100):
        np.testing.assert_array_equal(np.bincount(labels[: 10 * k], minlength=10), [k] * 10, err_msg=f"first {10 * k}")
    assert len(set(labels[:10].tolist())) == 10 and labels[:10].tolist() != list(range(10)), "digits of a round shuffled"


def test_bundled_splits_are_disjoint() -> None:
    train = {img.tobytes() for img in load_mnist_subset("train")[0]}
    heldout = {img.tobytes() for img in load_mnist_subset("heldout")[0]}
    assert len(train) == 4000 and len(heldout) == 1000
    assert not train & heldout


def test_normalize_convention() -> None:
    images = np.array([[[0] * 28] * 28, [[255] * 28] * 28], dtype=np.uint8)
    x = normalize(images)
    assert x.shape == (2, 1, 28, 28) and x.dtype == np.float32
    assert x[0].max() == 0.0 and x[1].min() == 1.0
    with pytest.raises(ValueError, match="uint8"):
        normalize(x)


def test_write_npz_is_byte_deterministic(tmp_path: Path) -> None:
    arrays = {"a.w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(2, np.uint8)}
    write_npz(tmp_path / "1.npz", arrays)
    write_npz(tmp_path / "2.npz", arrays)
    assert (tmp_path / "1.npz").read_bytes() == (tmp_path / "2.npz").read_bytes()
    with np.load(tmp_path / "1.npz") as npz:
        np.testing.assert_array_equal(npz["a.w"], arrays["a.w"])
