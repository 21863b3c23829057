"""`Reading`: how items are read into pooled features — everything that changes their values.

Every field is part of the activation store's data key, so features read one way are never served
for another.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from internals.errors import OptionError
from internals.pool import POOL_CHOICES, PoolHow

LongTexts = Literal["window", "truncate", "error"]
LONG_TEXT_CHOICES: tuple[str, ...] = get_args(LongTexts)


@dataclass(frozen=True)
class Reading:
    """Pooling, and what to do with texts longer than the model's maximum length.

    long_texts: "window" (default) reads a long text as sliding windows of the maximum length,
    `window_stride` tokens apart (default: half a window), each word from the window where it has
    the most context; "truncate" keeps the first window only (a warning says how many items and
    tokens were cut); "error" refuses such texts, naming the item.
    """

    pool: PoolHow = "mean"
    long_texts: LongTexts = "window"
    window_stride: int | None = None

    def __post_init__(self) -> None:
        if self.pool not in POOL_CHOICES:
            raise OptionError(
                f"pool={self.pool!r} is not a pooling; choose one of {', '.join(POOL_CHOICES)}"
            )
        if self.long_texts not in LONG_TEXT_CHOICES:
            raise OptionError(
                f"long_texts={self.long_texts!r}; choose one of {', '.join(LONG_TEXT_CHOICES)}"
            )
        stride = self.window_stride
        if stride is not None and (isinstance(stride, bool) or not isinstance(stride, int)):
            raise OptionError(f"window_stride={stride!r}; give a positive number of tokens or None")
        if stride is not None and stride < 1:
            raise OptionError(f"window_stride={stride}; give a positive number of tokens or None")

    def key(self) -> dict[str, Any]:
        """The settings as they enter the store's data key."""
        return asdict(self)
