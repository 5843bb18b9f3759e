"""Image files in, label files out: strict reading, palette label PNGs."""
from pathlib import Path

import cv2
import numpy as np
import pytest
import tifffile
from PIL import Image

from jungleseg import ColourFeatures, DepthFeatures, VolumeFeatures
from jungleseg.imageio import (
    class_palette,
    image_files,
    read_image,
    read_labels,
    write_labels,
)


@pytest.fixture
def picture():
    rng = np.random.default_rng(0)
    return (rng.random((30, 40, 3)) * 255).astype(np.uint8)


def test_formats_read_in_rgb_order(picture, tmp_path):
    cv2.imwrite(str(tmp_path / "a.png"), cv2.cvtColor(picture, cv2.COLOR_RGB2BGR))
    tifffile.imwrite(tmp_path / "a.tif", picture)
    cv2.imwrite(str(tmp_path / "lzw.tif"), cv2.cvtColor(picture, cv2.COLOR_RGB2BGR))  # LZW
    np.save(tmp_path / "a.npy", picture)
    for name in ("a.png", "a.tif", "lzw.tif", "a.npy"):
        np.testing.assert_array_equal(read_image(tmp_path / name), picture, err_msg=name)
    cv2.imwrite(str(tmp_path / "a.jpg"), cv2.cvtColor(picture, cv2.COLOR_RGB2BGR))
    opencv = cv2.cvtColor(cv2.imread(str(tmp_path / "a.jpg")), cv2.COLOR_BGR2RGB)
    np.testing.assert_array_equal(read_image(tmp_path / "a.jpg"), opencv)  # same decoder
    depth = np.arange(1200, dtype=np.uint16).reshape(30, 40) + 500
    cv2.imwrite(str(tmp_path / "d.png"), depth)
    got = read_image(tmp_path / "d.png", DepthFeatures())
    assert got.dtype == np.uint16 and np.array_equal(got, depth)
    floats = np.random.default_rng(1).random((10, 12, 5)).astype(np.float32)
    tifffile.imwrite(tmp_path / "f.tif", floats)
    np.testing.assert_array_equal(read_image(tmp_path / "f.tif"), floats)


@pytest.mark.parametrize("suffix", [".png", ".jpg", ".tif", ".npy"])
def test_truncated_files_are_errors_naming_the_file(picture, tmp_path, suffix):
    path = tmp_path / f"a{suffix}"
    if suffix == ".npy":
        np.save(path, picture)
    elif suffix == ".tif":
        tifffile.imwrite(path, picture)
    else:
        cv2.imwrite(str(path), cv2.cvtColor(picture, cv2.COLOR_RGB2BGR))
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 7):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=str(path)):
            read_image(path)


def test_a_jpeg_is_read_upright_as_its_exif_orientation_says(tmp_path):
    """A phone's photo is stored sideways with an EXIF orientation that viewers apply:
    read as they show it (and as OpenCV reads it), so that labels drawn on it fit."""
    upright = np.zeros((32, 48, 3), np.uint8)
    upright[:8, :8] = 255  # a white top-left corner
    sideways = Image.fromarray(upright).transpose(Image.Transpose.ROTATE_90)
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to display"
    sideways.save(tmp_path / "phone.jpg", exif=exif, quality=95)
    read = read_image(tmp_path / "phone.jpg")
    assert read.shape == upright.shape
    assert read[:8, :8].min() > 200 and read[-8:, -8:].max() < 50
    assert cv2.imread(str(tmp_path / "phone.jpg")).shape == upright.shape  # as OpenCV reads


def test_shape_checks_and_paths(picture, tmp_path):
    cv2.imwrite(str(tmp_path / "g.png"), picture[:, :, 0])
    with pytest.raises(ValueError, match="reads RGB images; this one is grey"):
        read_image(tmp_path / "g.png", ColourFeatures())
    np.save(tmp_path / "c.npy", picture)
    with pytest.raises(ValueError, match="reads grey images"):
        read_image(tmp_path / "c.npy", ColourFeatures(input="grey"))
    stack = tmp_path / "stack" / "z.npy"
    stack.parent.mkdir()
    np.save(stack, np.full((24, 30, 40), 2.0))  # a float z-stack, not RGB: its shape says so
    with pytest.raises(ValueError, match=r"z.npy: the model reads RGB images \(H, W, 3\); "
                                         r"this one has shape \(24, 30, 40\)"):
        read_image(stack, ColourFeatures())
    with pytest.raises(ValueError, match="is a folder"):
        read_image(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_image(tmp_path / "missing.png")
    with pytest.raises(ValueError, match="no images"):
        image_files([tmp_path / "empty"] if (tmp_path / "empty").mkdir() is None else [])
    (tmp_path / "._g.png").write_bytes(b"\0\5\26\7")  # macOS' AppleDouble file: hidden
    assert [p.name for p in image_files([tmp_path])] == ["c.npy", "g.png"]


def test_label_pngs_are_palette_images_of_the_class_values(tmp_path):
    labels = np.array([[0, 1, 2], [7, 255, 1]], np.uint8)
    colours = {"0": [10, 20, 30], "1": [255, 0, 0], "2": [0, 255, 0]}
    picture = Image.open(write_labels(tmp_path / "l.png", labels, colours))
    assert picture.mode == "P"
    np.testing.assert_array_equal(np.asarray(picture), labels)
    palette = np.array(picture.getpalette()).reshape(-1, 3)
    assert palette[0].tolist() == [10, 20, 30] and palette[2].tolist() == [0, 255, 0]
    assert len({tuple(c) for c in class_palette()[:16]}) == 16  # distinct fallback colours
    wide = np.array([[0, 300]], np.int64)
    back = cv2.imread(str(write_labels(tmp_path / "w.png", wide)), cv2.IMREAD_UNCHANGED)
    assert back.dtype == np.uint16 and back.tolist() == [[0, 300]]
    with pytest.raises(OSError, match="could not write"):
        write_labels(tmp_path / "missing" / "l.png", labels)


def test_label_tiffs_are_palette_images_of_the_class_values(tmp_path):
    """A label volume (or stack) written as TIFF carries the class colours on every page,
    as a label PNG does, and reads back as the class values; values above 255 stay 16-bit
    grey."""
    labels = np.array([[[0, 1], [2, 3]], [[3, 2], [1, 0]], [[1, 1], [2, 2]]], np.uint8)
    path = write_labels(tmp_path / "v.tif", labels, {"1": [255, 0, 0]})
    with tifffile.TiffFile(path) as tiff:
        assert len(tiff.pages) == 3
        assert all(page.photometric == tifffile.PHOTOMETRIC.PALETTE for page in tiff.pages)
        assert tiff.pages[2].colormap[:, 1].tolist() == [65535, 0, 0]
    np.testing.assert_array_equal(read_labels(path), labels)
    np.testing.assert_array_equal(tifffile.imread(path), labels)  # indices, not colours
    wide = write_labels(tmp_path / "w.tif", labels.astype(np.uint16) * 300)
    with tifffile.TiffFile(wide) as tiff:
        assert tiff.pages[0].photometric == tifffile.PHOTOMETRIC.MINISBLACK
    np.testing.assert_array_equal(read_labels(wide), labels.astype(np.uint16) * 300)


@pytest.mark.parametrize("name", ["l.png", "w.png", "v.tif"])
def test_an_interrupted_label_write_leaves_the_previous_file(tmp_path, monkeypatch, name):
    labels = {"l.png": np.ones((4, 5), np.uint8), "w.png": np.full((4, 5), 300),
              "v.tif": np.ones((2, 4, 5), np.uint8)}[name]
    target = write_labels(tmp_path / name, labels)
    before = target.read_bytes()

    def half_written(path, *args, **kwargs):
        with open(path, "wb") as f:
            f.write(before[:10])
        raise KeyboardInterrupt

    if name == "l.png":
        monkeypatch.setattr(Image.Image, "save", lambda self, path, **kw: half_written(path))
    elif name == "w.png":
        monkeypatch.setattr(Path, "write_bytes", half_written)
    else:
        monkeypatch.setattr(tifffile, "imwrite", half_written)
    with pytest.raises(KeyboardInterrupt):
        write_labels(target, labels * 2)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left
    monkeypatch.undo()
    np.testing.assert_array_equal(read_labels(write_labels(target, labels * 2)), labels * 2)


def test_a_colour_coded_label_png_is_an_error_listing_its_colours(tmp_path):
    mask = np.zeros((4, 9, 3), np.uint8)
    mask[:, 3:6] = (255, 0, 0)
    mask[:, 6:] = (0, 128, 255)
    Image.fromarray(mask).save(tmp_path / "two.png")
    with pytest.raises(ValueError, match=r"two.png: a colour picture \(colours #000000, "
                                         r"#0080ff, #ff0000\); .*'Colour-coded labels'"):
        read_labels(tmp_path / "two.png")
    many = np.arange(10 * 3, dtype=np.uint8).reshape(1, 10, 3)
    Image.fromarray(many).save(tmp_path / "many.png")
    with pytest.raises(ValueError, match=r"#0c0d0e, #0f1011, \.\.\. 10 in all\)"):
        read_labels(tmp_path / "many.png")


@pytest.mark.parametrize("mode", ["LA", "RGB", "RGBA"])
def test_a_grey_label_png_with_alpha_or_in_rgb_reads_its_grey_values(tmp_path, mode):
    """Masks exported with an alpha channel, or as RGB, by painting programs are grey
    pictures, not colour-coded ones: their grey values are the classes."""
    labels = np.array([[0, 1, 2], [255, 1, 0]], np.uint8)
    Image.fromarray(labels).convert(mode).save(tmp_path / "m.png")
    read = read_labels(tmp_path / "m.png")
    assert read.shape == labels.shape and read.flags.c_contiguous
    np.testing.assert_array_equal(read, labels)


def test_a_volume_model_refuses_pictures(tmp_path):
    """An RGB picture is (H, W, 3), a volume's shape: a volume model refuses PNG and JPEG
    files rather than segment one as H slices of W x 3 voxels."""
    picture = np.zeros((16, 20, 3), np.uint8)
    for name in ("p.png", "p.jpg"):
        Image.fromarray(picture).save(tmp_path / name)
        with pytest.raises(ValueError, match=f"{name}: a 2-D picture; this volume model"):
            read_image(tmp_path / name, VolumeFeatures())
    tifffile.imwrite(tmp_path / "v.tif", np.zeros((5, 16, 20), np.uint8))
    assert read_image(tmp_path / "v.tif", VolumeFeatures()).shape == (5, 16, 20)


def test_stacks_of_two_dimensional_images(tmp_path):
    """A grey z-stack (N, H, W) or an RGB one (N, H, W, 3) is a stack of a 2-D model's
    images: refused with a message that says so, or read whole when asked; a grey model
    still refuses a colour picture."""
    from jungleseg.imageio import is_stack

    grey, rgb = ColourFeatures(input="grey"), ColourFeatures()
    assert is_stack(grey, (5, 32, 32)) and is_stack(rgb, (5, 32, 32, 3))
    assert not is_stack(grey, (32, 32, 3)) and not is_stack(rgb, (32, 32, 3))
    assert not is_stack(grey, (32, 32, 2))  # two stains: refused, not 32 slices
    assert not is_stack(VolumeFeatures(), (5, 32, 32))
    stack = np.arange(5 * 32 * 30, dtype=np.uint16).reshape(5, 32, 30)
    tifffile.imwrite(tmp_path / "s.tif", stack)
    with pytest.raises(ValueError, match="s.tif: a stack of 5 images of 32x30"):
        read_image(tmp_path / "s.tif", grey)
    np.testing.assert_array_equal(read_image(tmp_path / "s.tif", grey, stacks=True), stack)
    colour = np.zeros((2, 8, 8, 4), np.uint8)
    np.save(tmp_path / "c.npy", colour)
    assert read_image(tmp_path / "c.npy", rgb, stacks=True).shape == (2, 8, 8, 3)  # no alpha


@pytest.mark.filterwarnings("error::PIL.Image.DecompressionBombWarning")
def test_pictures_above_pillows_decompression_bomb_limit_are_read(tmp_path, monkeypatch):
    # Pillow warns above 89 Mpx and refuses above 179 Mpx (a 14000 x 14000 scan); the
    # user's own files are read whole whatever their size, and the limit is left as it was
    from jungleseg.cli._classes import palette_colours

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 64 x 64 is above twice this
    rng = np.random.default_rng(0)
    grey = rng.integers(0, 65535, (64, 64), dtype=np.uint16)
    cv2.imwrite(str(tmp_path / "grey.png"), grey)
    rgb = rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(tmp_path / "photo.jpg", quality=95)
    labels = rng.integers(0, 3, (64, 64), dtype=np.uint8)
    write_labels(tmp_path / "labels.png", labels, {"1": [255, 0, 0]})

    np.testing.assert_array_equal(read_image(tmp_path / "grey.png"), grey)
    assert read_image(tmp_path / "photo.jpg").shape == (64, 64, 3)
    np.testing.assert_array_equal(read_labels(tmp_path / "labels.png"), labels)
    assert palette_colours([tmp_path / "labels.png"])[1] == [255, 0, 0]
    assert Image.MAX_IMAGE_PIXELS == 1000
