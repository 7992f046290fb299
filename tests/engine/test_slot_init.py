"""slot_init: the faster __init__ of frozen slotted dataclasses behaves as the dataclass's own."""

import dataclasses
import inspect
import pickle

import pytest

from app.engine import AcceleratorSpec, BuildSpec, IntraNodeLink, Workload
from app.engine.model_shape import ModelSpec
from app.engine.results import FailoverCase
from app.engine.slot_init import SOURCE_NAME, slot_init


@dataclasses.dataclass(frozen=True, slots=True)
class _Plain:
    a: int
    b: str = "x"
    c: tuple[int, ...] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class _Reference:  # the same fields, left with the dataclass's own __init__
    a: int
    b: str = "x"
    c: tuple[int, ...] | None = None


slot_init(_Plain)


def _params(cls: type) -> list[tuple[str, object, object]]:
    return [(p.name, p.default, p.kind) for p in inspect.signature(cls).parameters.values()]


def test_signature_is_the_dataclass_signature() -> None:
    assert _params(_Plain) == _params(_Reference)


def test_positional_keyword_and_default_values_are_stored() -> None:
    for args, kwargs in (((1,), {}), ((1, "y"), {}), ((), {"a": 2, "c": (3,)}), ((4,), {"b": "z"})):
        got, want = _Plain(*args, **kwargs), _Reference(*args, **kwargs)
        assert (got.a, got.b, got.c) == (want.a, want.b, want.c)


def test_argument_errors_are_type_errors() -> None:
    with pytest.raises(TypeError):
        _Plain()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Plain(1, d=2)  # type: ignore[call-arg]


def test_instances_stay_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Plain(1).a = 2  # type: ignore[misc]


def test_workload_keeps_its_hash_equality_pickle_and_replace() -> None:
    w = Workload(precision="fp8", context_tokens=8192, batch=4)
    same = Workload(**{f.name: getattr(w, f.name) for f in dataclasses.fields(w)})
    assert w == same and hash(w) == hash(same)
    assert pickle.loads(pickle.dumps(w)) == w
    assert dataclasses.replace(w, batch=2).batch == 2 and hash(dataclasses.replace(w)) == hash(w)


def test_engine_inputs_and_failover_cases_use_it() -> None:
    for cls in (AcceleratorSpec, IntraNodeLink, BuildSpec, Workload, FailoverCase):
        assert cls.__init__.__code__.co_filename == SOURCE_NAME, cls


def test_refuses_fields_it_cannot_fill() -> None:
    with pytest.raises(TypeError, match="not a plain init field"):
        slot_init(ModelSpec)  # its derived fields are init=False
