"""Image files in and label files out: what the command line reads and writes.

Reading is strict: a truncated or damaged file is an error naming the file, never a
warning with a half-grey picture. PNG files are checked chunk by chunk (CRC, the end
chunk) by Pillow and decoded by OpenCV (16-bit, palettes expanded); JPEG files are
decoded by Pillow, which refuses truncated data and gives the same pixels as OpenCV;
TIFF files are read by tifffile (any channel count and dtype, multipage stacks as
volumes, an ImageJ or OME channel axis moved last; OpenCV for the LZW files tifffile
cannot decode without ``imagecodecs``); NPY files by NumPy without pickles; zarr arrays
and OME-Zarr images (level 0 of the multiscales, a channel axis moved last) by zarr,
lazily: a tiled segmentation reads them tile by tile. Colour pictures come out in RGB
order; channels always come last.

Label images are written as palette (indexed) PNGs: the pixel values are the class values,
and the palette gives each class its colour, so viewers show colours. Pillow, imageio and
scikit-image read back the values; OpenCV expands the palette to colours. Label volumes
are written as multipage TIFF files, and labels of any size as zarr arrays (chunk by
chunk, OME-Zarr for a name ending in ``.ome.zarr``). :func:`read_labels` reads label
files back strictly: one integer class value per pixel. PNG and TIFF files, and zarr
arrays, are written atomically: an interrupted write leaves no half file and any previous
file untouched.
"""
from __future__ import annotations

import colorsys
import os
import threading
from pathlib import Path

import numpy as np

from ._atomic import written_atomically, zarr_written_atomically

#: Suffixes read by :func:`read_image` (case-insensitive); a ``.zarr`` is a folder.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".npy", ".zarr")
#: Suffixes :func:`write_labels` writes.
LABEL_SUFFIXES = (".png", ".tif", ".tiff", ".zarr")
ZARR_SUFFIX = ".zarr"


#: Held while Pillow's decompression-bomb limit is lifted (:func:`_pillow_open`).
_PIXEL_LIMIT = threading.Lock()


def _pillow_open(path: Path):
    """``path`` opened by Pillow, or ValueError naming it. Pillow's decompression-bomb
    limit (a warning above 89 Mpx, an error above 179 Mpx) guards servers against
    uploaded files; the files read here are the user's own, and a 10000 x 10000 scan or
    a stitched microscopy image is above it, so it is lifted while the file is opened."""
    from PIL import Image, UnidentifiedImageError

    try:
        with _PIXEL_LIMIT:
            limit, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
            try:
                return Image.open(path)
            finally:
                Image.MAX_IMAGE_PIXELS = limit
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
    """A JPEG upright, as its EXIF orientation says (as viewers, annotation tools and
    OpenCV show a phone's photo), so that labels drawn on it line up."""
    from PIL import ImageOps

    with _pillow_open(path) as picture:
        try:
            picture.load()
        except (OSError, SyntaxError, ValueError) as err:
            raise ValueError(f"{path}: damaged or truncated image file ({err})") from None
        ImageOps.exif_transpose(picture, in_place=True)
        if picture.mode not in ("L", "RGB"):
            picture = picture.convert("RGB")
        return np.asarray(picture)


def _read_tiff(path: Path) -> np.ndarray:
    import cv2
    import tifffile

    try:
        with tifffile.TiffFile(path) as tiff:
            series = tiff.series[0]
            image, axes = series.asarray(), series.axes
        return _channels_last(image, axes)
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


def _channels_last(image: np.ndarray, axes: str) -> np.ndarray:
    """A TIFF series with its channel axis (``C``, e.g. ImageJ's ZCYX) last and axes of
    one element other than the image's own (time, ``Q``) dropped; colour samples (``S``)
    are last already."""
    axes = axes.upper()
    for k in reversed(range(len(axes))):
        if axes[k] not in "CSZYX" and image.shape[k] == 1:
            image, axes = image.reshape(image.shape[:k] + image.shape[k + 1:]), \
                axes[:k] + axes[k + 1:]
    if "C" in axes and "S" not in axes:
        image = np.moveaxis(image, axes.index("C"), -1)
    return image


def _rgb_order(image: np.ndarray) -> np.ndarray:
    import cv2

    if image.ndim == 3 and image.shape[2] == 3:  # in place: no second copy of a large image
        return cv2.cvtColor(image, cv2.COLOR_BGR2RGB, dst=image)
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2RGB)
    return image


def _read_npy(path: Path, mmap: bool = False) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, EOFError, OSError) as err:
        raise ValueError(f"{path}: not a readable NPY array ({err})") from None


class LazyImage:
    """A lazy view of an array (an OME-Zarr level): the axes ``index`` fixes (an int)
    dropped, and the axis ``channel`` of the others moved last. Slicing with slices and
    ints reads only the part asked for, so a tiled segmentation reads tile by tile."""

    def __init__(self, array, index: tuple, channel: int | None):
        self.array, self.index = array, index
        kept = [k for k, i in enumerate(index) if isinstance(i, slice)]
        if channel is not None:
            kept.append(kept.pop(channel))
        self.axes = kept  # the array axis of each axis of the view
        self.shape = tuple(array.shape[k] for k in kept)
        self.dtype, self.ndim = np.dtype(array.dtype), len(kept)

    def __getitem__(self, key) -> np.ndarray:
        key = key if isinstance(key, tuple) else (key,)
        if key and key[0] is Ellipsis:
            key = key[1:]
        full = list(self.index)
        for axis, k in zip(self.axes, key):
            full[axis] = k
        part = np.asarray(self.array[tuple(full)])
        left = [a for a, k in zip(self.axes, key + (slice(None),) * self.ndim)
                if isinstance(k, slice)]  # the view axes that remain, in view order
        return np.transpose(part, np.argsort(np.argsort(left))) if part.ndim > 1 else part

    def __array__(self, dtype=None, copy=None):
        image = self[...]
        return image if dtype is None else image.astype(dtype)

    def __len__(self) -> int:
        return self.shape[0]


def _ome_multiscales(attrs) -> list | None:
    """The ``multiscales`` of OME-Zarr attributes (0.4, or 0.5 under ``ome``)."""
    attrs = dict(attrs)
    return (attrs.get("ome") or {}).get("multiscales") or attrs.get("multiscales")


def _read_zarr(path: Path):
    """A zarr array, or level 0 of an OME-Zarr image (axes of one element other than
    the image's own dropped, the channel axis last), lazily."""
    import zarr

    try:
        node = zarr.open(str(path), mode="r")
    except Exception as err:  # zarr raises many kinds: any is an unreadable file
        raise ValueError(f"{path}: not a readable zarr array ({err})") from None
    if hasattr(node, "shape"):
        return node
    multiscales = _ome_multiscales(node.attrs)
    if not multiscales:
        arrays = [name for name, _ in node.arrays()]
        if len(arrays) != 1:
            raise ValueError(f"{path}: a zarr group with {len(arrays)} arrays and no "
                             "OME-Zarr multiscales: give the array itself (GROUP/NAME)")
        return node[arrays[0]]
    scale = multiscales[0]
    array = node[scale["datasets"][0]["path"]]
    axes = [a["name"] if isinstance(a, dict) else a for a in scale.get("axes", [])]
    if len(axes) != array.ndim:
        return array
    index = tuple(slice(None) if name in "czyx" or n > 1 else 0
                  for name, n in zip(axes, array.shape))
    kept = [name for name, i in zip(axes, index) if isinstance(i, slice)]
    channel = kept.index("c") if "c" in kept else None
    if channel is None and len(kept) == array.ndim:
        return array
    return LazyImage(array, index, channel)


_READERS = {".png": _read_png, ".jpg": _read_jpeg, ".jpeg": _read_jpeg, ".tif": _read_tiff,
            ".tiff": _read_tiff, ".npy": _read_npy, ".zarr": _read_zarr}


def is_stack(family, shape: tuple) -> bool:
    """Whether an array of ``shape`` is a stack of the 2-D images a 2-D colour ``family``
    reads: one axis more in front (a z-stack or a time series, segmented slice by slice).
    For a grey model, (H, W, C) with at most 4 channels stays a picture of channels (a
    colour picture, or two or three stains), which it refuses.

    >>> from jungleseg import ColourFeatures
    >>> grey = ColourFeatures(input="grey")
    >>> is_stack(grey, (30, 256, 256)), is_stack(grey, (256, 256)), is_stack(grey, (256, 256, 3))
    (True, False, False)
    """
    if getattr(family, "spatial_ndim", 3) != 2 or getattr(family, "input", None) is None:
        return False
    if family.input == "grey":
        return len(shape) == 3 and shape[-1] > 4
    return len(shape) == 4


def read_image(path: str | os.PathLike, family=None, mmap: bool = False,
               stacks: bool = False) -> np.ndarray:
    """One image file as an array (RGB order for colour pictures; with ``mmap``, an NPY
    file is memory-mapped and a zarr array stays lazy, so a tiled segmentation reads them
    tile by tile; without, everything is read into memory); with the model's
    feature ``family``, also the checks that its shape suits the model (a grey model
    refuses colour pictures, an RGB model grey ones, a depth model anything but one
    channel, a volume model PNG and JPEG pictures). With ``stacks``, a stack of the
    family's 2-D images (:func:`is_stack`) is returned whole, (N, H, W[, C]). Raises
    ValueError naming the file for anything unreadable, damaged or truncated, and
    FileNotFoundError for a missing one."""
    from .features import DepthFeatures

    path = Path(path)
    zarr = path.suffix.lower() == ZARR_SUFFIX
    if path.is_dir() and not zarr:
        raise ValueError(f"{path}: is a folder, not an image file")
    if not (path.is_dir() if zarr else path.is_file()):
        raise FileNotFoundError(f"{path}: no such image file")
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"{path}: unknown image type; readable: {', '.join(IMAGE_SUFFIXES)}")
    image = reader(path, mmap) if reader is _read_npy else reader(path)
    if zarr and not mmap:
        image = np.asarray(image)
    if getattr(family, "spatial_ndim", 2) == 3 and reader in (_read_png, _read_jpeg):
        raise ValueError(f"{path}: a 2-D picture; this volume model reads volumes (TIFF "
                         "stacks, NPY or zarr)")  # an RGB picture is no (D, H, W) volume
    if isinstance(family, DepthFeatures):
        if image.ndim != 2:
            raise ValueError(f"{path}: a depth image must have one channel, got {image.shape}")
        return image
    stack = is_stack(family, image.shape)
    if stack and not stacks:
        raise ValueError(f"{path}: a stack of {image.shape[0]} images of "
                         f"{'x'.join(map(str, image.shape[1:3]))}; this reads one 2-D image "
                         "(the command line segments and trains on stacks slice by slice)")
    if (image.ndim == 3 + stack and image.shape[-1] == 4
            and getattr(family, "input", None) == "rgb"):
        image = image[..., :3] if isinstance(image, np.ndarray) else np.asarray(image)[..., :3]
    if getattr(family, "input", None) == "grey" and image.ndim == 3 and not stack:
        raise ValueError(f"{path}: the model reads grey images; this one has "
                         f"{image.shape[2]} channels")
    if getattr(family, "input", None) == "rgb" and image.ndim != 3 + stack:
        raise ValueError(f"{path}: the model reads RGB images; this one is grey")
    if getattr(family, "input", None) == "rgb" and image.shape[-1] != 3:
        raise ValueError(f"{path}: the model reads RGB images (H, W, 3); this one has shape "
                         f"{image.shape} (a stack of grey images, or other channels)")
    return image


def image_files(paths) -> list[Path]:
    """The image files named by ``paths``: files as given, folders' readable images
    sorted by name (hidden files passed over, such as the ``._a.jpg`` macOS writes beside
    ``a.jpg`` on other disks). Raises FileNotFoundError for a path that does not exist
    and ValueError when no image is found."""
    files = []
    for p in map(Path, paths):
        if p.is_dir() and p.suffix.lower() != ZARR_SUFFIX:
            files += sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES
                            and not f.name.startswith(".")
                            and (f.is_dir() if f.suffix.lower() == ZARR_SUFFIX
                                 else f.is_file()))
        elif p.exists():
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


def _colours_in(picture: np.ndarray, most: int = 6) -> str:
    """The distinct RGB colours of a colour picture, for an error message: the first
    ``most`` as ``#rrggbb``, and how many there are in all."""
    rgb = picture[..., :3].astype(np.uint32)
    packed = np.unique((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2])
    listed = ", ".join(f"#{int(c):06x}" for c in packed[:most])
    return f"colours {listed}" + (f", ... {packed.size} in all" if packed.size > most else "")


def read_labels(path: str | os.PathLike) -> np.ndarray:
    """One label file as an integer array of class values: (H, W) label images or (D, H,
    W) label volumes, from PNG (grey, 16-bit or palette: the palette indices are the
    values; a grey picture saved as RGB or with alpha gives its grey values), TIFF, NPY or
    zarr. Raises ValueError naming the file for anything that is not
    one whole class value 0..65535 per pixel (colour pictures, JPEG, floats, negative
    values), or unreadable."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jpg", ".jpeg"):
        raise ValueError(f"{path}: JPEG is lossy and changes label values; save labels as "
                         "PNG, TIFF, NPY or zarr")
    if suffix == ".png":
        read_image(path)  # the strict checks: truncation, damaged chunks
        with _pillow_open(path) as picture:
            palette = picture.mode == "P"
            labels = np.asarray(picture) if palette else None
        if labels is None:
            labels = _read_png(path)
    else:
        labels = np.asarray(read_image(path))
    if labels.ndim == 3 and labels.shape[2] in (3, 4) and suffix == ".png":
        rgb = labels[..., :3]
        if not (rgb == rgb[..., :1]).all():
            raise ValueError(f"{path}: a colour picture ({_colours_in(labels)}); a label "
                             "file holds one class value per pixel (grey or palette PNG, values "
                             "0, 1, 2...): convert each colour to its class value "
                             "(docs/guide/own-data.md, 'Colour-coded labels')")
        labels = np.ascontiguousarray(rgb[..., 0])  # grey saved as RGB or with alpha
    if labels.dtype.kind not in "uib":
        raise ValueError(f"{path}: {labels.dtype} values; labels must be whole class values "
                         "(an integer type)")
    if labels.size and (labels.min() < 0 or labels.max() > 65535):
        raise ValueError(f"{path}: label values {labels.min()}..{labels.max()}; class values "
                         "must lie in 0..65535")
    if labels.ndim not in (2, 3):
        raise ValueError(f"{path}: labels of shape {labels.shape}; expected (H, W) or "
                         "(D, H, W)")
    return labels.astype(np.uint8) if labels.dtype.kind == "b" else labels


def _label_dtype(path: Path, high: int):
    if high > 65535:
        raise ValueError(f"{path}: label values up to {high} do not fit in 0..65535")
    return np.uint8 if high < 256 else np.uint16


def write_labels(path: str | os.PathLike, labels: np.ndarray,
                 colours: dict | None = None) -> Path:
    """Write a label image or volume by the suffix of ``path``: ``.png`` a palette PNG
    (values 0..255, colours from :func:`class_palette`) or, for larger values, a 16-bit
    grey PNG; ``.tif`` a TIFF, multipage for a (D, H, W) volume, palette as the PNG (so
    that viewers show classes 1, 2... in colour, not as near-black greys) or 16-bit grey;
    ``.zarr`` a zarr array (see :func:`open_label_array`). Raises OSError naming the file
    when it cannot be written."""
    import cv2
    from PIL import Image

    path = Path(path)
    labels = np.asarray(labels)
    suffix = path.suffix.lower()
    if labels.size and labels.min() < 0:
        raise ValueError(f"{path}: negative label values cannot be written")
    dtype = _label_dtype(path, int(labels.max(initial=0)))
    if suffix == ZARR_SUFFIX:
        with zarr_written_atomically(path) as tmp:
            out = NamedWrites(open_label_array(tmp, labels.shape, dtype, colours=colours,
                                               name=path.stem), path)
            out[...] = labels
        return path
    if suffix not in (".tif", ".tiff") and labels.ndim != 2:
        raise ValueError(f"{path}: labels of shape {labels.shape} need a .tif or .zarr file")
    try:
        with written_atomically(path) as tmp:
            if suffix in (".tif", ".tiff"):
                import tifffile

                colour = {"photometric": "palette", "colormap": class_palette(colours).T
                          * np.uint16(257)} if dtype == np.uint8 else {"photometric": "minisblack"}
                tifffile.imwrite(tmp, labels.astype(dtype), compression="zlib", **colour)
            elif dtype == np.uint8:
                picture = Image.fromarray(labels.astype(np.uint8, copy=False), mode="P")
                picture.putpalette(class_palette(colours).ravel().tolist())
                picture.save(tmp, format="PNG")
            else:
                encoded, data = cv2.imencode(".png", labels.astype(np.uint16))
                if not encoded:
                    raise ValueError("OpenCV could not encode the labels as a PNG")
                tmp.write_bytes(data.tobytes())
    except (OSError, ValueError) as err:
        raise OSError(f"{path}: could not write this file ({err})") from None
    return path


class NamedWrites:
    """A label array (zarr) written chunk by chunk whose write errors name ``name``, its
    file: a full disk is ``labels.zarr: could not write this file (No space left on
    device)``, not a bare ``[Errno 28]`` (or one under the input's name). ``array`` is the
    array itself; ``shape`` and ``dtype`` are its own."""

    def __init__(self, array, name):
        self.array, self.name = array, str(name)
        self.shape, self.dtype = array.shape, array.dtype

    def __setitem__(self, key, value) -> None:
        try:
            self.array[key] = value
        except OSError as err:
            raise OSError(f"{self.name}: could not write this file "
                          f"({err.strerror or err})") from None


def open_label_array(path: str | os.PathLike, shape: tuple, dtype, chunks: tuple | None = None,
                     colours: dict | None = None, name: str | None = None):
    """A new zarr array at ``path`` for labels of ``shape``, filled chunk by chunk by the
    caller (so labels of any size are written without holding them). A name ending in
    ``.ome.zarr`` makes an OME-Zarr image (NGFF 0.4: one level ``0``, axes y, x or z, y,
    x), named ``name`` (default the file's stem). The class colours go to the attributes
    (``class_colours``)."""
    import zarr

    path = Path(path)
    chunks = chunks or tuple(min(n, 1024 if len(shape) == 2 else 128) for n in shape)
    version = int(zarr.__version__.split(".")[0])
    fmt = {"zarr_format": 2} if version >= 3 else {}
    try:
        if path.name.lower().endswith(".ome.zarr"):
            group = zarr.open_group(str(path), mode="w", **fmt)
            axes = [{"name": a, "type": "space"} for a in "zyx"[3 - len(shape):]]
            group.attrs["multiscales"] = [{"version": "0.4", "name": name or path.stem,
                                          "axes": axes,
                                          "datasets": [{"path": "0", "coordinateTransformations":
                                                        [{"type": "scale",
                                                          "scale": [1.0] * len(shape)}]}]}]
            make = group.create_array if hasattr(group, "create_array") else group.create_dataset
            array = make("0", shape=shape, chunks=chunks, dtype=dtype, fill_value=0)
            group.attrs["class_colours"] = colours or {}
            return array
        array = zarr.open_array(str(path), mode="w", shape=shape, chunks=chunks, dtype=dtype,
                                fill_value=0)
        array.attrs["class_colours"] = colours or {}
        return array
    except (OSError, ValueError) as err:
        raise OSError(f"{path}: could not write this file ({err})") from None
