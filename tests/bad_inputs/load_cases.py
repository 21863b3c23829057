"""`load_subject` options and specs that cannot work, refused before anything is loaded."""

from __future__ import annotations

import json

from internals import ModelNotFoundError, load_subject
from internals.errors import OptionError, VectorsFileError
from lingprobe.errors import DeviceError
from tests.bad_inputs.case import Case, Env


def remote_code_folder(env: Env) -> None:
    folder = env.tmp()
    config = {"model_type": "custom", "auto_map": {"AutoModel": "modeling_custom.CustomModel"}}
    (folder / "config.json").write_text(json.dumps(config))
    load_subject(str(folder))


def ragged_vectors(env: Env) -> None:
    path = env.tmp() / "ragged.txt"
    path.write_text("cat 1 2 3\ndog 1 2\n", encoding="utf-8")
    load_subject(f"glove:{path}")


LOAD = [
    Case(
        "load-cuda-missing",
        'device="cuda:7" (no such GPU here)',
        "DeviceError: CUDA is not available / no such GPU",
        lambda env: load_subject(str(env.bert_folder), device="cuda:7"),
        DeviceError,
        r"device='cuda:7': (CUDA is not available here|this machine has \d+ CUDA)",
    ),
    Case(
        "load-device-unknown",
        'device="gpu"',
        "DeviceError: not a device torch knows",
        lambda env: load_subject(str(env.bert_folder), device="gpu"),
        DeviceError,
        r"device='gpu' is not a device torch knows",
    ),
    Case(
        "load-init-unknown",
        'init="trained"',
        "OptionError: choose 'pretrained' or 'random'",
        lambda env: load_subject(str(env.bert_folder), init="trained"),
        OptionError,
        r"init='trained'; choose 'pretrained' or 'random'",
        typed=True,
    ),
    Case(
        "load-backend-unknown",
        'backend="tl"',
        "OptionError: choose auto, nnsight, lens",
        lambda env: load_subject(str(env.bert_folder), backend="tl"),
        OptionError,
        r"backend='tl'; choose one of auto, nnsight, lens",
        typed=True,
    ),
    Case(
        "load-scheme-unknown",
        'random_scheme="he"',
        "OptionError: choose a scheme",
        lambda env: load_subject(str(env.bert_folder), random_scheme="he"),
        OptionError,
        r"random_scheme='he'",
        typed=True,
    ),
    Case(
        "load-head-unknown",
        'head="mlm"',
        "OptionError: choose None, 'lm' or 'sequence-classification'",
        lambda env: load_subject(str(env.bert_folder), head="mlm"),
        OptionError,
        r"head='mlm'; choose None, 'lm' or 'sequence-classification'",
        typed=True,
    ),
    Case(
        "load-object-no-tokenizer",
        "load_subject(model) without tokenizer",
        "OptionError: pass tokenizer=",
        lambda env: load_subject(env.bert_model()),
        OptionError,
        r"a model object needs its tokenizer",
    ),
    Case(
        "load-unknown-model",
        'load_subject("no-such-org/no-such-model") offline',
        "ModelNotFoundError: check the name",
        lambda env: load_subject("no-such-org/no-model"),
        ModelNotFoundError,
        r"cannot load 'no-such-org/no-model': it is not a local folder",
    ),
    Case(
        "load-remote-code",
        "a folder whose config maps to custom code (auto_map)",
        "ModelNotFoundError: needs trust_remote_code=True, which runs its code",
        remote_code_folder,
        ModelNotFoundError,
        r"without trust_remote_code=True: .* executes Python files",
    ),
    Case(
        "load-empty-folder",
        "a folder without config or tokenizer",
        "ModelNotFoundError: the folder has no usable config or tokenizer",
        lambda env: load_subject(str(env.tmp())),
        ModelNotFoundError,
        r"the folder has no usable config or tokenizer",
    ),
    Case(
        "load-no-vectors-file",
        'load_subject("glove:/nonexistent.txt")',
        "ModelNotFoundError: no such vectors file",
        lambda env: load_subject("glove:/nonexistent/v.txt"),
        ModelNotFoundError,
        r"no such vectors file",
    ),
    Case(
        "load-ragged-vectors",
        "a vectors line with fewer values",
        "VectorsFileError: file:line",
        ragged_vectors,
        VectorsFileError,
        r"ragged\.txt:2: 2 values where earlier lines have 3",
    ),
    Case(
        "load-spec-int",
        "load_subject(42)",
        "OptionError: give a hub id, folder or model",
        lambda env: load_subject(42),
        OptionError,
        r"spec is a int",
        typed=True,
    ),
    Case(
        "load-seed-string",
        'seed="0"',
        "OptionError: give an integer seed",
        lambda env: load_subject(str(env.bert_folder), init="random", seed="0"),
        OptionError,
        r"seed='0': give an integer seed",
        typed=True,
    ),
]
