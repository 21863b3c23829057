"""Sites: where in a subject activations are read (`Site(part, layer, stream)`).

Layer k of a part follows Hugging Face's `hidden_states[k]`: k = 0 is the embedding output (the
input of the first block), k = i + 1 the output of block i, and the last layer is the part's final
hidden state (after the final norm where the architecture has one, as HF reports it).

A head site `Site(part, k, "head", head=h)` (name `part.k.head.h`) is head h of block k - 1's
attention: its output (the pattern-weighted values) before the output projection, `head_dim`
wide. Like the other streams of a block (`attn_out`, `mlp_out`) it exists for layers 1..n.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Protocol, runtime_checkable

from internals.errors import SiteError
from internals.sae_sites import KEY_CHARS, SaeEncoder, encoder_of, sae_encoder

RESID_POST = "resid_post"
HEAD = "head"


@runtime_checkable
class HasSiteWidths(Protocol):
    """Anything that says how wide one segment's features are at a site (a `Subject`)."""

    def site_dim(self, site: Site) -> int:
        """Width of one segment's features at `site`."""
        ...


@runtime_checkable
class HasSites(Protocol):
    """Anything that exposes its parts and their layer counts (a `Subject`)."""

    @property
    def part_layers(self) -> dict[str, int]:
        """Number of layers per part, e.g. {"encoder": 6}; sites run 0..n inclusive."""
        ...

    @property
    def streams(self) -> tuple[str, ...]:
        """Streams the backend can read besides `resid_post`."""
        ...

    @property
    def part_heads(self) -> dict[str, int]:
        """Attention heads per layer per part, e.g. {"decoder": 9}; empty without heads."""
        ...

    def site_dim(self, site: Site) -> int:
        """Width of one segment's features at `site`."""
        ...


def _layer_number(value: object, where: str) -> int:
    """An integer layer index (ints and numpy/torch integers; never bools, floats or strings)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise SiteError(
            f"{where}: layer {value!r} ({type(value).__name__}) is not an integer; give a whole"
            " layer number (0 = embeddings, negative counts from the last layer in sites.select)"
        ) from None


@dataclass(frozen=True, order=True)
class Site:
    """One readable place: a part ("encoder", "decoder" or "static"), a layer index, a stream,
    and for the `head` stream the attention head's index."""

    part: str
    layer: int
    stream: str = RESID_POST
    head: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.part, str) or not isinstance(self.stream, str):
            raise SiteError(
                f"Site({self.part!r}, {self.layer!r}, {self.stream!r}): part and stream are"
                " strings, e.g. Site('encoder', 3) or Site('decoder', 5, 'mlp_out')"
            )
        object.__setattr__(self, "layer", _layer_number(self.layer, f"Site({self.part!r}, ...)"))
        if (self.stream == HEAD) != (self.head is not None):
            raise SiteError(
                f"Site({self.part!r}, {self.layer}, {self.stream!r}, head={self.head!r}): a head"
                f" index goes with stream {HEAD!r} and only with it, e.g."
                f" Site('decoder', 5, {HEAD!r}, head=3)"
            )
        if self.head is not None:
            head = _layer_number(self.head, f"Site({self.part!r}, {self.layer}, {HEAD!r}, ...)")
            if head < 0:
                raise SiteError(
                    f"Site({self.part!r}, {self.layer}, {HEAD!r}, head={head}): heads are"
                    " numbered from 0"
                )
            object.__setattr__(self, "head", head)

    @property
    def name(self) -> str:
        """Stable string form, e.g. `encoder.3`, `decoder.5.mlp_out` or `decoder.5.head.3`."""
        base = f"{self.part}.{self.layer}"
        if self.head is not None:
            return f"{base}.{self.stream}.{self.head}"
        return base if self.stream == RESID_POST else f"{base}.{self.stream}"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, order=True)
class SaeSite(Site):
    """A site read through a sparse autoencoder: its latents per token, then pooled
    (`internals.sae_sites`). Made by `sae(site, module)`; its name ends in `.sae-<digest>` of the
    SAE's weights, which keys the activation store."""

    sae: SaeEncoder | None = field(default=None, compare=False, repr=False)
    sae_key: str = ""

    @property
    def name(self) -> str:
        """The plain site's name and the SAE's digest, e.g. `encoder.3.sae-1f2e3d4c5b6a7980`."""
        return f"{super().name}.sae-{self.sae_key[:KEY_CHARS]}"


def sae(site: Site | str, module: object) -> SaeSite:
    """The latents of SAE `module` (a SAELens `SAE`, or a torch module with `encode`) at `site`
    (a `Site` or a name like `"decoder.6"`): each token encoded, then pooled like any site."""
    base = parse_site(site) if isinstance(site, str) else site
    if not isinstance(base, Site) or isinstance(base, SaeSite):
        raise SiteError(
            f"sites.sae: site {site!r} is not a plain site; give Site(part, layer) or a name"
            " like 'encoder.3'"
        )
    encoder = sae_encoder(module)
    plain = {f.name: getattr(base, f.name) for f in fields(Site)}
    return SaeSite(**plain, sae=encoder, sae_key=encoder.key)


def parse_site(text: str) -> Site:
    """Inverse of `Site.name`: `"encoder.3"` -> `Site("encoder", 3)`,
    `"decoder.5.head.3"` -> `Site("decoder", 5, "head", head=3)`."""
    parts = text.strip().split(".")
    is_head = len(parts) == 4 and parts[2] == HEAD and parts[3].isdigit()
    if not (len(parts) in (2, 3) or is_head) or not parts[1].lstrip("-").isdigit():
        raise SiteError(
            f"cannot parse site {text!r}; write it as PART.LAYER[.STREAM] or"
            " PART.LAYER.head.HEAD, e.g. encoder.3 or decoder.5.head.3"
        )
    if is_head:
        return Site(parts[0], int(parts[1]), HEAD, head=int(parts[3]))
    stream = parts[2] if len(parts) == 3 else RESID_POST
    return Site(parts[0], int(parts[1]), stream)


def every_layer(subject: HasSites, part: str | None = None) -> list[Site]:
    """The embedding output plus every layer's residual output, for every part (or one part)."""
    parts = [part] if part is not None else list(subject.part_layers)
    return [Site(p, k) for p in parts for k in range(_layers(subject, p) + 1)]


def every_head(
    subject: HasSites, part: str | None = None, layers: Sequence[int] | None = None
) -> list[Site]:
    """Every attention head of every layer (1..n; or of `layers`), for every part (or one).

    Examples:
        >>> from internals import load_subject, sites
        >>> minilm = load_subject("sentence-transformers/all-MiniLM-L6-v2")
        >>> heads = sites.every_head(minilm)
        >>> len(heads), heads[0].name, heads[-1].name
        (72, 'encoder.1.head.0', 'encoder.6.head.11')
    """
    parts = [part] if part is not None else list(subject.part_layers)
    chosen = []
    for p in parts:
        n = _layers(subject, p)
        heads = subject.part_heads.get(p, 0)
        if not heads:
            raise SiteError(
                f"{p} of this subject has no attention heads to read; head sites need a"
                " transformer (word vectors have none)"
            )
        wanted = range(1, n + 1) if layers is None else [_layer_number(k, "layers") for k in layers]
        chosen += [
            _from_end(subject, Site(p, k, HEAD, head=h)) for k in wanted for h in range(heads)
        ]
    check(subject, chosen)
    return chosen


def last(subject: HasSites, part: str | None = None) -> list[Site]:
    """The final layer of the subject's first part (the encoder of an encoder-decoder)."""
    name = part if part is not None else next(iter(subject.part_layers))
    return [Site(name, _layers(subject, name))]


def select(subject: HasSites, spec: str, part: str | None = None) -> list[Site]:
    """Sites from a command-line spec: `all`, `last`, or comma-separated layers / site names."""
    spec = spec.strip()
    if spec == "all":
        return every_layer(subject, part)
    if spec == "last":
        return last(subject, part)
    default_part = part if part is not None else next(iter(subject.part_layers))
    chosen = []
    for token in spec.split(","):
        token = token.strip()
        site = Site(default_part, int(token)) if token.lstrip("-").isdigit() else parse_site(token)
        chosen.append(_from_end(subject, site))
    check(subject, chosen)
    return chosen


SiteSpec = str | Site | int | Sequence[Site | str | int]


def resolve(subject: HasSites, requested: SiteSpec, part: str | None = None) -> list[Site]:
    """Sites from anything a caller may naturally write, checked against the subject.

    `Site` objects; names like `"encoder.3"` or `"decoder.5.mlp_out"`; layer numbers of the
    first part (negative ones count from the last layer); or one spec string as `select` reads
    it (`"all"`, `"last"`, `"3,5"`). Repeats are dropped, order kept.
    """
    if isinstance(requested, str):
        return select(subject, requested, part)
    if isinstance(requested, Site) or hasattr(requested, "__index__"):
        values: list[object] = [requested]
    elif isinstance(requested, Sequence):
        values = list(requested)
    else:
        raise SiteError(
            f"sites={requested!r}: give a list of sites (Site objects, names like 'encoder.3'"
            " or layer numbers) or a spec string ('all', 'last', '3,5')"
        )
    default_part = part if part is not None else next(iter(subject.part_layers))
    chosen = []
    for value in values:
        if isinstance(value, Site):
            site = value
        elif isinstance(value, str):
            token = value.strip()
            if token.lstrip("-").isdigit():
                site = Site(default_part, int(token))
            else:
                site = parse_site(token)
        elif hasattr(value, "__index__"):
            site = Site(default_part, _layer_number(value, "sites"))
        else:
            raise SiteError(
                f"sites: {value!r} ({type(value).__name__}) is not a site; give Site(part,"
                " layer), a name like 'encoder.3', or a layer number"
            )
        chosen.append(_from_end(subject, site))
    chosen = list(dict.fromkeys(chosen))
    check(subject, chosen)
    return chosen


def _from_end(subject: HasSites, site: Site) -> Site:
    """A negative layer counted from the part's last layer (-1 = the last)."""
    if site.layer >= 0:
        return site
    n = _layers(subject, site.part)
    if site.layer < -(n + 1):
        raise SiteError(
            f"site {site.name}: layer {site.layer} is out of range; {site.part} has layers 0..{n},"
            f" or {-(n + 1)}..-1 counted from the last"
        )
    return replace(site, layer=n + 1 + site.layer)


def check(subject: HasSites, requested: list[Site]) -> None:
    """Raise `SiteError` naming the first site the subject does not have."""
    if not requested:
        raise SiteError("no sites requested; use sites.every_layer(subject) or sites.last(subject)")
    for site in requested:
        n = _layers(subject, site.part)
        if not 0 <= site.layer <= n:
            raise SiteError(
                f"site {site.name}: layer {site.layer} does not exist;"
                f" {site.part} has layers 0..{n}"
            )
        if site.stream == HEAD:
            _check_head(subject, site, n)
        elif site.stream != RESID_POST and site.stream not in subject.streams:
            offered = ", ".join((RESID_POST, *subject.streams))
            raise SiteError(
                f"site {site.name}: stream {site.stream!r} is not readable here; choose one of"
                f" {offered} (other streams need backend='lens')"
            )


def common_dim(subject: HasSiteWidths, requested: Sequence[Site]) -> int:
    """The one feature width of `requested` (features are `[item, site, segments x dim]`): the
    subject's `site_dim` (a head's width at head sites), an SAE's latent count at SAE sites, each
    SAE checked unchanged since its site was made (its weights hashed once, however many sites
    read it). An extraction calls it once, at its start, and `shared_dim` after that."""
    checked: set[tuple[int, str]] = set()
    for site in requested:
        encoder = encoder_of(site)
        if encoder is not None and (id(encoder.module), encoder.key) not in checked:
            encoder.check_unchanged(site.name)
            checked.add((id(encoder.module), encoder.key))
    return shared_dim(subject, requested)


def shared_dim(subject: HasSiteWidths, requested: Sequence[Site]) -> int:
    """`common_dim` without hashing any SAE: the width of sites an extraction has already
    checked with `common_dim` (a window of a store run, a batch of items), at no cost that
    grows with the SAEs' sizes."""
    widths = {}
    for site in requested:
        encoder = encoder_of(site)
        widths[site] = subject.site_dim(site) if encoder is None else encoder.d_sae
    if len(set(widths.values())) > 1:
        first, other = requested[0], next(s for s in requested if widths[s] != widths[requested[0]])
        raise SiteError(
            f"sites {first.name} ({widths[first]} wide) and {other.name} ({widths[other]} wide)"
            " differ in width and cannot share one features tensor; read head sites, SAE sites"
            " (one SAE width) and other sites in separate calls"
        )
    return widths[requested[0]]


def _check_head(subject: HasSites, site: Site, n: int) -> None:
    heads = subject.part_heads.get(site.part, 0)
    if HEAD not in subject.streams or not heads:
        raise SiteError(
            f"site {site.name}: no attention heads found in this subject's blocks (head sites are"
            " read at the attention's output projection, internals.heads.OUTPUT_PROJECTIONS);"
            " give a transformer whose projection is listed there, or add its path to that list"
        )
    if site.layer == 0:
        raise SiteError(f"site {site.name}: head sites exist for layers 1..{n} (0 is embeddings)")
    assert site.head is not None
    if site.head >= heads:
        raise SiteError(
            f"site {site.name}: head {site.head} does not exist; {site.part} has heads"
            f" 0..{heads - 1} per layer"
        )


def _layers(subject: HasSites, part: str) -> int:
    if part not in subject.part_layers:
        raise SiteError(
            f"unknown part {part!r}; this subject has parts {sorted(subject.part_layers)}"
        )
    return subject.part_layers[part]
