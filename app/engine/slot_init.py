"""A faster __init__ for the frozen, slotted dataclasses every estimate builds.

A frozen dataclass's generated __init__ stores each field with `object.__setattr__(self, name,
value)`: ~1.3K instructions a field in CPython 3.11 (a wrapper-descriptor call that packs its
arguments and looks the name up again), so a 28-field Workload cost ~50K instructions, about
what the plan search costs. `slot_init` replaces it with one generated from the same fields that
calls each slot's own setter (its member descriptor's `__set__`, looked up once): ~0.8K a
field. Same signature, defaults, positional and keyword use and `__post_init__` call; the class
itself (slots, frozen __setattr__, eq, hash, repr, pickle, replace) is untouched.
tests/engine/test_slot_init.py checks signatures and instances against the dataclass's own.
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields
from typing import Any, TypeVar

_C = TypeVar("_C", bound=type)
SOURCE_NAME = "<slot_init>"  # the generated functions' file name (tests look for it)


def slot_init(cls: _C) -> _C:
    """Give a frozen slotted dataclass (init fields only, no default factories) a faster
    __init__ with the dataclass's own signature."""
    params = []
    body = []
    scope: dict[str, Any] = {}
    for f in fields(cls):
        if not f.init or f.default_factory is not MISSING or f.kw_only:
            raise TypeError(f"slot_init: {cls.__name__}.{f.name} is not a plain init field")
        if f.default is MISSING:
            params.append(f.name)
        else:
            scope[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
        scope[f"_s_{f.name}"] = cls.__dict__[f.name].__set__  # the slot's member descriptor
        body.append(f"    _s_{f.name}(self, {f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"])
    exec(compile(source, SOURCE_NAME, "exec"), scope)  # field names of our own dataclasses
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    generated = vars(cls)["__init__"]  # the dataclass's own (one the class defines)
    init.__doc__ = generated.__doc__
    if _params(init) != _params(generated):
        raise TypeError(f"slot_init: {cls.__name__}'s generated signature differs")
    cls.__init__ = init  # type: ignore[misc]
    return cls


def _params(function: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.default, p.kind) for p in inspect.signature(function).parameters.values()]
