"""``jungleseg segment``: image files and folders to label files, a bad file reported and
the others finished."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._outputs import error, writable_file, writable_folder
from ._run import Flag, budget, cluster, progress, say, stop_if_interrupted

#: Suffix of ``--out`` that names one label file rather than a folder.
LABEL_SUFFIX = ".png"


def label_targets(files: list[Path], out: Path, suffix: str) -> list[tuple[Path, Path]]:
    """(input, label file) pairs: ``--out`` ending in .png (.tif for volumes, or .zarr)
    names the one label file; else it is a folder for ``<name><suffix>`` files, and two
    inputs of one name (``a.jpg`` and ``a.png``, or from two folders) are an error, as
    the second would overwrite the first's labels."""
    from ..imageio import IMAGE_SUFFIXES

    if out.suffix.lower() in (suffix, ".zarr") or out.name.lower().endswith(".tiff"):
        if len(files) != 1:
            raise ValueError(f"--out {out} names one label file, but there are "
                             f"{len(files)} images; give a folder")
        return [(files[0], writable_file(out, "--out"))]
    if out.suffix.lower() in IMAGE_SUFFIXES:
        raise ValueError(f"--out {out}: labels are written as {suffix[1:].upper()} (or zarr); "
                         f"give NAME{suffix}, NAME.zarr or a folder")
    names = [f"{f.name[:-len(f.suffix)] if f.suffix else f.name}{suffix}" for f in files]
    first: dict[str, Path] = {}
    for f, name in zip(files, names):
        if first.setdefault(name, f) != f:
            raise ValueError(f"{first[name]} and {f} would both be segmented to {out / name}; "
                             "rename one, or segment them into different --out folders")
    folder = writable_folder(out, "--out")
    return [(f, folder / name) for f, name in zip(files, names)]


def cmd_segment(args: argparse.Namespace) -> int:
    """Segment image files and folders (volume files with a volume model) with a model;
    write label PNGs (multipage label TIFFs for volumes, or zarr), and probabilities."""
    from .._jit import compile_timer
    from ..imageio import image_files
    from ..io import load_model
    from ..segmentation import with_inference

    jungle = with_inference(load_model(args.model), args.soft, args.soft_epsilon,
                            args.prior_power)
    limit = budget(args)
    if args.tile is not None and args.tile < 1:
        raise ValueError(f"--tile must be >= 1, got {args.tile}")
    suffix = ".tif" if jungle.family.spatial_ndim == 3 else LABEL_SUFFIX
    targets = label_targets(image_files(args.inputs), Path(args.out), suffix)
    pixels, failed, start = 0, 0, time.perf_counter()
    with cluster(args) as client:
        if client is not None:
            from ..distributed import segment_files

            bar = progress(args, len(targets), "segmenting")  # chunk by chunk in a zarr
            try:
                results = segment_files(client, args.model, targets, args.tile,
                                        args.smoothing, args.probabilities,
                                        inference=(args.soft, args.soft_epsilon,
                                                   args.prior_power),
                                        stop=lambda: Flag.interrupted, progress=bar.update)
            finally:
                bar.close()
            done = [(path, r) for (path, _), r in zip(targets, results) if r is not None]
            for path, (n, problem) in done:
                if problem is not None and args.fail_fast:
                    raise ValueError(naming(path, ValueError(problem)))
                if problem is not None:
                    error(naming(path, ValueError(problem)))
                failed, pixels = failed + (problem is not None), pixels + n
    if client is not None:  # Ctrl-C: the tasks cancelled and the cluster closed by now
        stop_if_interrupted(f"{len(done) - failed} of {len(targets)} images segmented")
    else:
        from .._jit import announce_compile

        announce_compile("segment", quiet=args.quiet)
    from .._progress import progress_bar

    bar = (progress(args, len(targets), "segmenting") if client is None
           else progress_bar(total=0, disable=True))  # the cluster's bar is closed by now
    local, segmented = (targets if client is None else []), 0
    try:
        with compile_timer() as compiling:
            for (path, _), (n, err) in zip(local, _segmented(jungle, local, args, limit)):
                bar.update(1)
                if err is not None and args.fail_fast:
                    raise err
                if err is not None:
                    failed += 1
                    error(naming(path, err))
                pixels, segmented = pixels + n, segmented + (err is None)
    finally:
        bar.close()
    if client is None:
        stop_if_interrupted(f"{segmented} of {len(targets)} images segmented")
    seconds = max(time.perf_counter() - start - compiling.seconds, 1e-9)
    done = len(targets) - failed
    compiled = (f"; compiling kernels took {compiling.seconds:.1f} s more, first run only"
                if compiling.seconds >= 0.05 else "")
    kind = "volume" if jungle.family.spatial_ndim == 3 else "image"
    if done:  # none: the errors said why, and nothing was written to args.out
        say(args, f"segmented {done} {kind}{'s' * (done != 1)} ({pixels / seconds / 1e6:.2f} "
                  f"Mpx/s{compiled}) -> {args.out}")
    if failed and len(targets) > 1:
        error(f"{failed} of {len(targets)} images failed (each reported above); "
              f"{done} segmented")
    return 1 if failed else 0


def _segmented(jungle, targets: list[tuple[Path, Path]], args, limit: int):
    """(pixels, None) or (0, error) for each (image file, label file) pair, in order; on
    Ctrl-C no further file is begun, and a large image stops between two tiles, its
    label file not written (those done before are reported).

    Once an image of at most :data:`jungleseg.segmentation.STREAM_PIXELS` pixels has been
    segmented, the others go several at a time (:func:`jungleseg._workers.ordered_map`, as
    :func:`jungleseg.segment_frames` does), each on one thread with an equal share of the
    memory budget: a folder of frames then keeps every core busy, reading and writing
    files included. Larger images go one at a time, each on every thread, and so do all
    with ``--fail-fast``, so that no file after the first bad one is written."""
    import numba

    from .._workers import ordered_map
    from ..jungle import ModelError
    from ..segmentation import STREAM_PIXELS
    from ..segmentation._files import segment_file

    def interrupted() -> bool:
        return Flag.interrupted

    def one(pair, max_memory: int):
        try:
            return segment_file(jungle, *pair, args.tile, args.smoothing, args.probabilities,
                                max_memory, stop=interrupted), None
        except (ValueError, OSError, MemoryError, ModelError) as err:
            return 0, err

    rest = iter(targets)
    for pair in rest:
        if interrupted():
            return
        n, err = result = one(pair, limit)
        if n is None:  # Ctrl-C between two tiles of a large image: nothing written
            return
        yield result
        if err is None and n <= STREAM_PIXELS and not args.fail_fast:
            share = limit // numba.get_num_threads()
            for result in ordered_map(lambda p, share=share: one(p, share), rest,
                                      stop=interrupted):
                if result[0] is None:
                    return
                yield result
            return


def naming(path: Path, err: BaseException) -> str:
    """The error's first line, starting with the file it concerns."""
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    text = text.removeprefix("image: ")  # segmentation's name for the array
    text = text.removeprefix(f"{path.resolve()}: ")  # a cluster worker's name for the file
    return text if text.startswith(str(path)) else f"{path}: {text}"
