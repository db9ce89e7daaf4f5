"""MNIST for the LeNet-5 module: the bundled 5,000-image subset and an IDX reader.

The package ships ``ascend_sim/models/data/mnist_5k.npz`` (see ``MNIST_ATTRIBUTION.md``
next to it): 5,000 real MNIST training digits, split once and for all into
4,000 training and 1,000 held-out images (stratified, 400 + 100 per class,
made by ``scripts/make_mnist_subset.py``). Each split is stored shuffled and
stratified (seeded): every prefix of 10k images holds exactly k of each digit,
so "the first N" of a split is a fair sample of all ten digits. The full MNIST
test set can be read from the standard IDX files with :func:`load_mnist_idx`.

Images are uint8 ``[N, 28, 28]`` (0 = background, 255 = ink) and labels uint8
``[N]``. :func:`normalize` turns images into the model input: float32
``[N, 1, 28, 28]`` in ``[0, 1]``, the one convention used by training, the
numpy reference and the simulated kernels.
"""

from __future__ import annotations

import gzip
import io
import os
import zipfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import numpy as np

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "MNIST_DIR_ENV",
    "bundled_file",
    "load_mnist_idx",
    "load_mnist_subset",
    "normalize",
    "write_npz",
]

#: Environment variable naming a directory with the standard MNIST IDX files.
MNIST_DIR_ENV = "ASCEND_SIM_MNIST_DIR"

_SUBSET_FILE = "mnist_5k.npz"
_SPLITS = ("train", "heldout")
_IDX_SPLITS = ("t10k", "train")
_IMAGES_MAGIC = 2051  # 0x00000803: unsigned bytes, 3 dimensions
_LABELS_MAGIC = 2049  # 0x00000801: unsigned bytes, 1 dimension
_SIDE = 28
_NUM_CLASSES = 10
_GZIP_MAGIC = b"\x1f\x8b"
_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def bundled_file(name: str) -> Traversable:
    """Return the packaged data file ``ascend_sim/models/data/<name>``."""
    return resources.files("ascend_sim.models") / "data" / name


def load_mnist_subset(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Load the bundled subset: ``split`` is ``"train"`` (4,000) or ``"heldout"`` (1,000).

    The images come shuffled and stratified: ``images[:10 * k]`` has k of each digit.
    Returns ``(images uint8 [N, 28, 28], labels uint8 [N])``.
    """
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {_SPLITS}, got {split!r}")
    with bundled_file(_SUBSET_FILE).open("rb") as f, np.load(f) as npz:
        return npz[f"{split}_images"], npz[f"{split}_labels"]


def normalize(images: np.ndarray) -> np.ndarray:
    """Map uint8 images ``[N, 28, 28]`` (or ``[N, 1, 28, 28]``) to float32 ``[N, 1, 28, 28]`` in [0, 1]."""
    images = np.asarray(images)
    if images.dtype != np.uint8:
        raise ValueError(
            f"normalize expects uint8 pixels 0..255, got dtype {images.dtype}; "
            "pass the images as loaded (load_mnist_subset / load_mnist_idx), not already normalized ones"
        )
    if images.shape[-2:] != (_SIDE, _SIDE) or images.ndim not in (3, 4):
        raise ValueError(f"normalize expects shape [N, 28, 28] or [N, 1, 28, 28], got {images.shape}")
    x = images.reshape(-1, 1, _SIDE, _SIDE).astype(np.float32)
    return x / np.float32(255.0)


def load_mnist_idx(directory: str | os.PathLike | None = None, split: str = "t10k") -> tuple[np.ndarray, np.ndarray]:
    """Read MNIST from standard IDX files (raw or gzip) in ``directory`` or ``$ASCEND_SIM_MNIST_DIR``.

    ``split`` is ``"t10k"`` (the 10,000-image test set) or ``"train"``; the files are
    ``<split>-images-idx3-ubyte[.gz]`` and ``<split>-labels-idx1-ubyte[.gz]``.
    Returns ``(images uint8 [N, 28, 28], labels uint8 [N])``.
    """
    if split not in _IDX_SPLITS:
        raise ValueError(f"split must be one of {_IDX_SPLITS}, got {split!r}")
    root = _mnist_dir(directory)
    images_path = _find_idx(root, f"{split}-images-idx3-ubyte")
    labels_path = _find_idx(root, f"{split}-labels-idx1-ubyte")
    images = _read_idx(images_path, _IMAGES_MAGIC, "images", "-images-idx3-ubyte")
    labels = _read_idx(labels_path, _LABELS_MAGIC, "labels", "-labels-idx1-ubyte")
    _check_images(images_path, images)
    _check_labels(labels_path, labels)
    if len(images) != len(labels):
        raise ValueError(
            f"{images_path} has {len(images)} images but {labels_path} has {len(labels)} labels; "
            "expected equal counts. Fix: use the images and labels files of the same split "
            "(both t10k or both train), downloaded together."
        )
    return images, labels


def write_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """Write a compressed ``.npz`` whose bytes depend only on ``arrays`` (fixed zip timestamps)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, array in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())


def _mnist_dir(directory: str | os.PathLike | None) -> Path:
    """Resolve the IDX directory from the argument or the environment variable."""
    if directory is None:
        directory = os.environ.get(MNIST_DIR_ENV)
        if not directory:
            raise FileNotFoundError(
                f"no MNIST directory given and {MNIST_DIR_ENV} is not set. Fix: call "
                f"load_mnist_idx('/path/to/mnist') or set {MNIST_DIR_ENV}=/path/to/mnist, a directory "
                "with t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz."
            )
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(
            f"MNIST directory {root} does not exist (expected a directory with the IDX files). "
            f"Fix: pass the directory that holds t10k-images-idx3-ubyte[.gz], or correct {MNIST_DIR_ENV}."
        )
    return root


def _find_idx(root: Path, stem: str) -> Path:
    """Return ``root/stem`` or ``root/stem.gz``, whichever exists."""
    for candidate in (root / stem, root / f"{stem}.gz"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"MNIST file not found: expected {root / stem} or {root / stem}.gz, found neither. "
        f"Fix: put the standard MNIST IDX file {stem}.gz (or the unzipped {stem}) in {root}, "
        f"or point load_mnist_idx / {MNIST_DIR_ENV} at the directory that has it."
    )


def _read_idx(path: Path, magic: int, kind: str, suffix: str) -> np.ndarray:
    """Parse one IDX file (gzip-compressed or raw) and check its magic number and length."""
    data = path.read_bytes()
    if data[:2] == _GZIP_MAGIC:
        data = gzip.decompress(data)
    if len(data) < 4:
        raise ValueError(_idx_error(path, "header", "at least 4 bytes", f"{len(data)} bytes"))
    found = int.from_bytes(data[:4], "big")
    if found != magic:
        raise ValueError(
            f"{path}: bad magic number: expected {magic} (IDX {kind} file), found {found}. "
            f"Fix: pass the {kind} file (name ending {suffix}[.gz]) here; if it is the right file, "
            "it is corrupted or not IDX: download it again."
        )
    ndim = data[3]
    header = 4 + 4 * ndim
    dims = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = header + int(np.prod(dims, dtype=np.int64))
    if len(data) != expected:
        raise ValueError(_idx_error(path, f"size for dimensions {dims}", f"{expected} bytes", f"{len(data)} bytes"))
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def _check_images(path: Path, images: np.ndarray) -> None:
    """Require 28x28 images."""
    if images.shape[1:] != (_SIDE, _SIDE):
        raise ValueError(_idx_error(path, "image size", f"{_SIDE}x{_SIDE}", "x".join(map(str, images.shape[1:]))))


def _check_labels(path: Path, labels: np.ndarray) -> None:
    """Require digit labels 0..9."""
    if labels.size and labels.max() >= _NUM_CLASSES:
        raise ValueError(_idx_error(path, "label values", "0..9", f"a label {labels.max()}"))


def _idx_error(path: Path, what: str, expected: str, found: str) -> str:
    """Message for a malformed IDX file: the file, the expected and found values, the fix."""
    return (
        f"{path}: wrong {what}: expected {expected}, found {found}. "
        "Fix: the file is truncated or is not MNIST: download the standard MNIST IDX files again."
    )
