"""Image files in and label files out: what the command line reads and writes.

Reading is strict: a truncated or damaged file is an error naming the file, never a
warning with a half-grey picture. PNG files are checked chunk by chunk (CRC, the end
chunk) by Pillow and decoded by OpenCV (16-bit, palettes expanded); JPEG files are
decoded by Pillow, which refuses truncated data and gives the same pixels as OpenCV;
TIFF files are read by tifffile (any channel count and dtype; OpenCV for the LZW files
tifffile cannot decode without ``imagecodecs``); NPY files by NumPy without pickles.
Colour pictures come out in RGB order.

Label images are written as palette (indexed) PNGs: the pixel values are the class values,
and the palette gives each class its colour, so viewers show colours. Pillow, imageio and
scikit-image read back the values; OpenCV expands the palette to colours.
"""
from __future__ import annotations

import colorsys
import os
from pathlib import Path

import numpy as np

#: Suffixes read by :func:`read_image` (case-insensitive).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".npy")


def _pillow_open(path: Path):
    from PIL import Image, UnidentifiedImageError

    try:
        return Image.open(path)
    except UnidentifiedImageError:
        raise ValueError(f"{path}: not an image file (or a damaged one)") from None
    except (OSError, SyntaxError, ValueError) as err:  # the header itself is cut short
        raise ValueError(f"{path}: damaged or truncated image file ({err})") from None


def _read_png(path: Path) -> np.ndarray:
    import cv2

    with _pillow_open(path) as picture:
        if picture.format == "JPEG":  # a JPEG named .png
            return _read_jpeg(path)
        try:
            picture.verify()  # every chunk's CRC and the end chunk: truncation, flipped bytes
        except (OSError, SyntaxError, ValueError) as err:
            raise ValueError(f"{path}: damaged or truncated image file ({err})") from None
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ValueError(f"{path}: cannot decode this image")
    return _rgb_order(image)


def _read_jpeg(path: Path) -> np.ndarray:
    with _pillow_open(path) as picture:
        try:
            picture.load()
        except (OSError, SyntaxError, ValueError) as err:
            raise ValueError(f"{path}: damaged or truncated image file ({err})") from None
        if picture.mode not in ("L", "RGB"):
            picture = picture.convert("RGB")
        return np.asarray(picture)


def _read_tiff(path: Path) -> np.ndarray:
    import cv2
    import tifffile

    try:
        return tifffile.imread(path)
    except ValueError as err:
        if "imagecodecs" not in str(err):
            raise ValueError(f"{path}: damaged or truncated image file ({err})") from None
    except (tifffile.TiffFileError, OSError, EOFError) as err:
        raise ValueError(f"{path}: damaged or truncated image file ({err})") from None
    logging = cv2.utils.logging  # OpenCV reads the compressions tifffile leaves to imagecodecs
    level = logging.getLogLevel()
    logging.setLogLevel(logging.LOG_LEVEL_SILENT)
    try:
        image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    finally:
        logging.setLogLevel(level)
    if image is None:
        raise ValueError(f"{path}: damaged or truncated image file")
    return _rgb_order(image)


def _rgb_order(image: np.ndarray) -> np.ndarray:
    import cv2

    if image.ndim == 3 and image.shape[2] in (3, 4):
        code = cv2.COLOR_BGRA2RGB if image.shape[2] == 4 else cv2.COLOR_BGR2RGB
        return cv2.cvtColor(image, code)
    return image


def _read_npy(path: Path, mmap: bool = False) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, EOFError, OSError) as err:
        raise ValueError(f"{path}: not a readable NPY array ({err})") from None


_READERS = {".png": _read_png, ".jpg": _read_jpeg, ".jpeg": _read_jpeg, ".tif": _read_tiff,
            ".tiff": _read_tiff, ".npy": _read_npy}


def read_image(path: str | os.PathLike, family=None, mmap: bool = False) -> np.ndarray:
    """One image file as an array (RGB order for colour pictures; with ``mmap``, an NPY
    file is memory-mapped, so a tiled segmentation reads it tile by tile); with the model's
    feature ``family``, also the checks that its shape suits the model (a grey model
    refuses colour pictures, an RGB model grey ones, a depth model anything but one
    channel). Raises ValueError naming the file for anything unreadable, damaged or
    truncated, and FileNotFoundError for a missing one."""
    from .features import DepthFeatures

    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a folder, not an image file")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such image file")
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"{path}: unknown image type; readable: {', '.join(IMAGE_SUFFIXES)}")
    image = reader(path, mmap) if reader is _read_npy else reader(path)
    if isinstance(family, DepthFeatures):
        if image.ndim != 2:
            raise ValueError(f"{path}: a depth image must have one channel, got {image.shape}")
        return image
    if image.ndim == 3 and image.shape[2] == 4 and getattr(family, "input", None) == "rgb":
        image = image[:, :, :3]
    if getattr(family, "input", None) == "grey" and image.ndim == 3:
        raise ValueError(f"{path}: the model reads grey images; this one has "
                         f"{image.shape[2]} channels")
    if getattr(family, "input", None) == "rgb" and image.ndim != 3:
        raise ValueError(f"{path}: the model reads RGB images; this one is grey")
    return image


def image_files(paths) -> list[Path]:
    """The image files named by ``paths``: files as given, folders' readable images
    sorted by name. Raises FileNotFoundError for a path that does not exist and
    ValueError when no image is found."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.iterdir()
                            if f.suffix.lower() in IMAGE_SUFFIXES and f.is_file())
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    if not files:
        raise ValueError(f"no images ({', '.join(IMAGE_SUFFIXES)}) found in "
                         f"{', '.join(map(str, paths))}")
    return files


def class_palette(colours: dict | None = None) -> np.ndarray:
    """(256, 3) uint8 palette: entry v is the colour of class value v from ``colours``
    (``{value: [r, g, b]}``, as a model's ``class_colours`` metadata holds them, keys
    may be strings); values without a colour get well-separated hues (0 black).

    >>> class_palette({"1": [255, 0, 0]})[:2].tolist()
    [[0, 0, 0], [255, 0, 0]]
    """
    palette = np.zeros((256, 3), np.uint8)
    for v in range(1, 256):
        hue = (v * 0.618033988749895) % 1.0  # golden-ratio steps: neighbours differ
        palette[v] = np.round(np.array(colorsys.hsv_to_rgb(hue, 0.65, 0.95)) * 255)
    for value, rgb in (colours or {}).items():
        if 0 <= int(value) < 256:
            palette[int(value)] = np.clip(np.asarray(rgb, np.int64), 0, 255)
    return palette


def write_labels(path: str | os.PathLike, labels: np.ndarray,
                 colours: dict | None = None) -> Path:
    """Write a label image: a palette PNG (values 0..255, colours from
    :func:`class_palette`) or, for larger values, a 16-bit grey PNG. Raises OSError
    naming the file when it cannot be written."""
    import cv2
    from PIL import Image

    path = Path(path)
    labels = np.asarray(labels)
    if labels.size and (labels.min() < 0 or labels.max() > 65535):
        raise ValueError(f"{path}: label values {labels.min()}..{labels.max()} do not fit "
                         "in a PNG (0..65535)")
    if labels.max(initial=0) < 256:
        picture = Image.fromarray(labels.astype(np.uint8), mode="P")
        picture.putpalette(class_palette(colours).ravel().tolist())
        try:
            picture.save(path, format="PNG")
        except (OSError, ValueError) as err:
            raise OSError(f"{path}: could not write this file ({err})") from None
    elif not cv2.imwrite(str(path), labels.astype(np.uint16)):
        raise OSError(f"{path}: could not write this file")
    return path
