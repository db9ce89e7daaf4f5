"""Images for the projects: real ones bundled in scikit-image's wheel, colour formats, synthetic defects.

Only files inside the installed ``skimage/data`` folder are read (never the pooch-downloaded data sets), so
nothing is fetched at run time. The host steps here stand in for the camera and DVPP (decode, resize, YUV):
they are not part of any simulated time.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Bundled images used by the projects and what they are (scikit-image's data/README.txt gives the sources).
BUNDLED = {
    "brick": "brick.png",       # a brick wall texture, 512x512 gray: the inspected surface
    "camera": "camera.png",     # the cameraman, 512x512 gray: a real scene for the edge detector
    "coins": "coins.png",       # Greek coins, 303x384 gray
    "ihc": "ihc.png",           # immunohistochemistry (IHC) stained human tissue, 512x512 RGB (public domain)
}


def bundled(name: str) -> np.ndarray:
    """A bundled scikit-image picture as a uint8 array, read from the installed wheel (no download)."""
    try:
        import skimage
        from skimage.io import imread
    except ImportError as e:     # pragma: no cover - scikit-image is in the course extra
        raise ImportError("the projects' real images come from scikit-image: pip install -e '.[course]'") from e
    if name not in BUNDLED:
        raise ValueError(f"unknown image {name!r}; bundled ones: {sorted(BUNDLED)}")
    path = Path(skimage.__file__).parent / "data" / BUNDLED[name]
    return np.asarray(imread(path))[..., :3] if name == "ihc" else np.asarray(imread(path))


def resize(img: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bilinear resize of a 2-D uint8 image (host side: the DVPP VPC resize)."""
    from skimage.transform import resize as sk_resize
    out = sk_resize(img.astype(np.float64), (height, width), order=1, mode="edge", anti_aliasing=False,
                    preserve_range=True)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def gray_to_nv12(y: np.ndarray) -> np.ndarray:
    """A YUV420SP (NV12) frame ``[h * 3 / 2, w]`` whose Y plane is ``y`` and whose chroma is neutral (128)."""
    h, w = y.shape
    if h % 2 or w % 2:
        raise ValueError(f"NV12 needs an even height and width, got {h}x{w}")
    return np.concatenate([np.asarray(y, np.uint8), np.full((h // 2, w), 128, np.uint8)])


def rgb_to_nv12(rgb: np.ndarray) -> np.ndarray:
    """BT.601 full-range RGB -> NV12 (Y = 0.299 R + 0.587 G + 0.114 B; U, V averaged over 2x2)."""
    f = np.asarray(rgb, np.float64)
    y = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]
    u = (f[..., 2] - y) * 0.564 + 128
    v = (f[..., 0] - y) * 0.713 + 128
    q = lambda a: np.clip(np.rint(a), 0, 255).astype(np.uint8)      # noqa: E731
    h, w = y.shape
    uv = np.empty((h // 2, w), np.uint8)
    uv[:, 0::2] = q(u.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3)))
    uv[:, 1::2] = q(v.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3)))
    return np.concatenate([q(y), uv])


@dataclass
class DefectFrame:
    """A synthetic inspection frame: the gray surface with defects and one label image per defect (1..n)."""

    gray: np.ndarray            # uint8 [h, w]
    labels: np.ndarray          # int32 [h, w]: 0 background, k for defect k
    kinds: list[str]            # "scratch" or "spot", per defect

    @property
    def count(self) -> int:
        return len(self.kinds)


def textured_surface(height: int, width: int, amplitude: float = 30.0, zoom: float = 2.5) -> np.ndarray:
    """The bundled brick texture, enlarged ``zoom`` times and mirrored to ``height x width``, scaled to
    128 +- ``amplitude`` gray levels (a textured part surface; the same scale whatever the frame size)."""
    b = bundled("brick").astype(np.float64)
    b = (b - b.mean()) / (np.abs(b - b.mean()).max() or 1.0)
    side = int(round(b.shape[0] * zoom))
    big = resize_float(b, side, side)
    reps = (-(-height // side), -(-width // side))
    tiled = np.block([[big[::(-1) ** i, ::(-1) ** j] for j in range(reps[1])] for i in range(reps[0])])
    return np.clip(np.rint(128 + amplitude * tiled[:height, :width]), 0, 255).astype(np.uint8)


def resize_float(img: np.ndarray, height: int, width: int) -> np.ndarray:
    from skimage.transform import resize as sk_resize
    return sk_resize(img, (height, width), order=1, mode="edge", anti_aliasing=False)


def synthetic_defects(height: int = 1080, width: int = 1920, *, seed: int = 0, scratches: int = 6, spots: int = 10,
                      amplitude: float = 30.0, noise: float = 3.0, contrast: tuple[int, int] = (18, 50)
                      ) -> DefectFrame:
    """Scratches (thin line segments) and spots (discs) of known position on the textured surface.

    The surface is the brick texture (+- ``amplitude`` levels) plus Gaussian sensor noise (sigma ``noise``);
    each defect is darker or brighter by a random ``contrast``. Defects keep 8 px apart (a candidate that
    would come closer is redrawn). ``scratches = spots = 0`` gives a defect-free (golden) part.
    """
    rng = np.random.default_rng(seed)
    gray = textured_surface(height, width, amplitude).astype(np.float64)
    labels = np.zeros((height, width), np.int32)
    kinds: list[str] = []
    R = min(130, min(height, width) // 2 - 4)                   # half size of the window a defect is drawn in
    tries = 0
    while len(kinds) < scratches + spots:
        tries += 1
        if tries > 200 * (scratches + spots):
            raise ValueError(f"could not place {scratches} scratches and {spots} spots 8 px apart on a "
                             f"{height}x{width} frame; ask for fewer defects or a larger frame")
        kind = "scratch" if len(kinds) < scratches else "spot"
        cy, cx = int(rng.integers(R + 2, height - R - 2)), int(rng.integers(R + 2, width - R - 2))
        yy, xx = np.mgrid[-R:R + 1, -R:R + 1]
        if kind == "scratch":
            length, angle, half_w = rng.uniform(60, 240), rng.uniform(0, np.pi), rng.uniform(0.7, 1.5)
            dy, dx = np.sin(angle), np.cos(angle)
            shape = (np.abs(yy * dy + xx * dx) <= length / 2) & (np.abs(-yy * dx + xx * dy) <= half_w)
        else:
            r = rng.uniform(3, 10)
            shape = yy ** 2 + xx ** 2 <= r * r
        win = (slice(cy - R, cy + R + 1), slice(cx - R, cx + R + 1))
        if _touches(labels[win], shape, 8):
            continue
        labels[win][shape] = len(kinds) + 1
        gray[win][shape] += rng.choice([-1, 1]) * rng.integers(*contrast)
        kinds.append(kind)
    gray += rng.normal(0.0, noise, gray.shape)
    return DefectFrame(np.clip(np.rint(gray), 0, 255).astype(np.uint8), labels, kinds)


def _touches(labels: np.ndarray, shape: np.ndarray, gap: int) -> bool:
    from scipy.ndimage import binary_dilation
    return bool((binary_dilation(shape, iterations=gap) & (labels > 0)).any())


__all__ = ["BUNDLED", "DefectFrame", "bundled", "gray_to_nv12", "resize", "rgb_to_nv12", "synthetic_defects",
           "textured_surface"]
