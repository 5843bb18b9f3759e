"""The base class of feature families, and the registry that rebuilds them from files.

A family says what a split may test. It draws candidate features for a node (through
a ``spec`` vector its Numba drawer understands) and turns raw images into the channels
of an :class:`ImageStore`. The trainer sees only kind codes, parameter rows and the
store, so a new family plugs in without changing it: a module with a subclass that
declares its name, its constructor's ``_parameter_constraints`` and its kernels.
"""
from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_params
from ._quantise import Quantiser, fit_quantiser, fit_sample, quantiser_of_samples
from ._store import ImageStore

#: Where a tile lies in its image: (first row, first column, image height, image width).
Window = tuple[int, int, int, int]

#: A single training image's float32 channels are kept for its codes, instead of being made
#: again after the quantiser's fit (:meth:`FeatureFamily.prepare_fitted`), up to this size.
FIT_CHANNELS_KEPT_BYTES = 256 << 20

#: Every family by name, filled as subclasses are defined.
FAMILIES: dict[str, type[FeatureFamily]] = {}


def coding_bytes(family: FeatureFamily) -> int:
    """Bytes per pixel that making a training store holds beside it while it codes an
    image (:meth:`FeatureFamily.prepare_fitted`): the image's float32 channels (a single
    image's kept from the quantiser's fit, or another image's made again)."""
    if family.quantiser is None and family.code_type is None:
        return 0  # float32 stores are written in place
    return 4 * family.n_store_channels


def _plain(value: Any) -> Any:
    """NumPy scalars as Python numbers and sequences as tuples, so that parameters
    compare, hash and go to JSON the same whatever the caller passed."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


class FeatureFamily:
    """Base class: a family of split features.

    A subclass declares ``name``, ``n_params`` (floats per parameter row),
    ``_parameter_constraints`` for its constructor's arguments (each stored under its
    own name) and :meth:`spec`, and makes channels with :meth:`channels_into`.
    """

    name: ClassVar[str] = "base"
    n_params: ClassVar[int] = 0
    _parameter_constraints: ClassVar[dict] = {}
    kind_codes: tuple = ()  # feature kind codes its split nodes may store
    n_store_channels = 1  # channels of the store it prepares
    needs_integral = False  # whether features read integral images
    spatial_ndim = 2  # 2: images (H, W[, C]); 3: volumes (D, H, W[, C])
    border = "edge"  # what a padded store's border holds (see ImageStore)
    #: The code type of the quantised stores its models train on and segment
    #: (:mod:`._quantise`); None: float32 stores.
    code_type: ClassVar[type | None] = None
    #: The quantiser of a fitted model's family (:meth:`with_quantiser`); None: its
    #: stores hold float32 values (families without codes, and models written before).
    quantiser: Quantiser | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        FAMILIES[cls.name] = cls

    @classmethod
    def _param_names(cls) -> list[str]:
        return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]

    def _validate(self) -> None:
        """Check the constructor's arguments (stored as attributes) against the
        constraints, then store them as plain values (see :func:`_plain`)."""
        params = {name: getattr(self, name) for name in self._param_names()}
        check_params(self._parameter_constraints, params, type(self).__name__)
        for name, value in params.items():
            setattr(self, name, _plain(value))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor arguments that rebuild this family. ``deep`` is accepted for
        scikit-learn's ``clone`` and ``get_params(deep=True)`` of the estimators holding a
        family; a family holds no estimators, so it changes nothing."""
        return {name: getattr(self, name) for name in self._param_names()}

    def __sklearn_clone__(self) -> FeatureFamily:
        """An equal, independent family: what ``sklearn.base.clone`` of an estimator
        holding this family uses (the constructor stores normalised copies of its
        arguments, so scikit-learn's own rebuild-and-compare check does not apply)."""
        return self.with_params()

    def with_params(self, **changes) -> FeatureFamily:
        """A new family of this class with some arguments changed (validated again)."""
        return type(self)(**{**self.get_params(), **changes})

    def with_quantiser(self, quantiser: Quantiser | None) -> FeatureFamily:
        """A copy of this family whose stores (:meth:`prepare`) hold the codes of
        ``quantiser``, or with None float32 values (as models written before quantised
        stores read them). Not one of its parameters: a family made again from its
        parameters (:meth:`with_params`, :meth:`to_dict`) has none."""
        family = copy.copy(self)
        family.quantiser = quantiser
        if quantiser is None:
            family.code_type = None
        return family

    def fitted_quantiser(self, images: Sequence[ArrayLike]) -> Quantiser | None:
        """The quantiser of a model of this family trained on ``images``: its own if it
        has one, a new one fitted to the images' channels
        (:func:`._quantise.fit_quantiser`) if the family keeps codes, else None."""
        if self.quantiser is not None or self.code_type is None:
            return self.quantiser
        return fit_quantiser(self.n_store_channels, images,
                             lambda image, out: self.channels_into(image, out),
                             self.code_type)

    @property
    def box_pixels(self) -> int | bool:
        """Pixels of the largest box a feature reads (True: unknown, the whole image);
        it decides the type of a quantised store's integral images."""
        return True

    def to_dict(self) -> dict:
        """JSON-friendly description, enough to rebuild the family
        (:func:`family_from_dict`)."""
        return {"name": self.name, **{k: list(v) if isinstance(v, tuple) else v
                                      for k, v in self.get_params().items()}}

    def channels(self, image: ArrayLike, window: Window | None = None) -> np.ndarray:
        """The (H, W, n_store_channels) float32 channels the features read from one image
        (or from a tile of one: ``window = (row0, col0, full_height, full_width)``)."""
        image = np.asarray(image)
        planes = np.empty((self.n_store_channels, *image.shape[:2]), np.float32)
        self.channels_into(image, planes, window)
        return np.moveaxis(planes, 0, 2)

    def channels_into(self, image: ArrayLike, out: np.ndarray, window: Window | None = None
                      ) -> None:
        """Write the channels of ``image`` into the (n_store_channels, H, W) float32
        array ``out``, which may be a strided view into a store."""
        raise NotImplementedError

    def margin(self, tile: ArrayLike) -> int:
        """Pixels of context around ``tile`` needed for its features to equal the whole
        image's."""
        raise NotImplementedError

    def prepare_fitted(self, images: Sequence[ArrayLike], pad: int = 0) -> ImageStore:
        """The store training on ``images`` reads: :meth:`prepare` by this family with
        :meth:`fitted_quantiser` of the images (the store's ``quantiser``). The channels
        of a single image of at most :data:`FIT_CHANNELS_KEPT_BYTES` are made once, for both
        the quantiser's fit and its codes, not twice (a napari press trains on one)."""
        images = [np.asarray(im) for im in images]
        n = self.n_store_channels
        shape = images[0].shape[:2] if len(images) == 1 else None
        if (self.quantiser is not None or self.code_type is None or shape is None
                or 4 * n * shape[0] * shape[1] > FIT_CHANNELS_KEPT_BYTES):
            return self.with_quantiser(self.fitted_quantiser(images)).prepare(images, pad=pad)
        planes = np.empty((n, *shape), np.float32)
        self.channels_into(images[0], planes)
        quantiser = quantiser_of_samples([fit_sample(planes)], self.code_type)
        return ImageStore.build([shape], n, None,
                                integral=self.box_pixels if self.needs_integral else False,
                                pad=pad, border=self.border, quantiser=quantiser,
                                values=[planes])

    def prepare(self, images: Sequence[ArrayLike], pad: int = 0, window: Window | None = None
                ) -> ImageStore:
        """A store of raw images converted to channels, with a border of ``pad`` pixels
        (see :class:`ImageStore`); ``window`` as for :meth:`channels`, for a single tile.
        With a :attr:`quantiser` (a fitted model's family), a store of its codes; without,
        of float32 values. ``family.with_quantiser(family.fitted_quantiser(images))``
        prepares the codes training on ``images`` would."""
        images = [np.asarray(im) for im in images]
        return ImageStore.build(
            [im.shape[:2] for im in images], self.n_store_channels,
            lambda i, planes: self.channels_into(images[i], planes, window=window),
            integral=self.box_pixels if self.needs_integral else False, pad=pad,
            border=self.border, quantiser=self.quantiser)

    @property
    def point_reach(self) -> int | None:
        """How far from its pixel a feature may probe, in pixels, when every kind reads
        single pixels at fixed offsets; None when some kind does not (depth probes scale
        with depth, box kinds read boxes). A store padded this far is segmented without
        clamping probes to the image (:meth:`Jungle.predict_image`)."""
        return None

    def spec(self) -> np.ndarray:
        """float64 vector read by the Numba candidate drawer."""
        raise NotImplementedError

    def check_params(self, params: np.ndarray) -> str | None:
        """Why these split-node parameter rows are unsafe for the kernels, or None."""
        return None

    def check_store(self, store: ImageStore) -> None:
        """Raise ValueError unless the kernels of this family may read ``store``."""
        if store.ndim != 2:
            raise ValueError("a 2-D model reads stores of 2-D images, not of volumes")

    def __eq__(self, other) -> bool:
        return isinstance(other, FeatureFamily) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.get_params().items())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def check_indices(values: np.ndarray, limit: int, what: str) -> str | None:
    """Why ``values`` are not whole numbers from 0 to ``limit - 1``, or None."""
    if np.any(values < 0) or np.any(values >= limit) or np.any(values != np.round(values)):
        return f"{what} indices must be whole numbers from 0 to {limit - 1}"
    return None


def family_from_dict(d: dict) -> FeatureFamily:
    """Rebuild a family from :meth:`FeatureFamily.to_dict` output.

    >>> from jungleseg.features import DepthFeatures
    >>> family_from_dict(DepthFeatures(0.3).to_dict())
    DepthFeatures(max_offset=0.3, focal_length=285.63)
    """
    d = dict(d)
    cls = FAMILIES.get(d.pop("name", None))
    if cls is None:
        raise ValueError(f"unknown feature family in {d!r}")
    return cls(**d)
