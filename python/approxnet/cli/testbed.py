"""``approxnet testbed ...``: the namespace testbed's own click group
(:mod:`approxnet.testbed.cli`), mounted unchanged."""

from __future__ import annotations

import click

from ..testbed.cli import testbed as _testbed

__all__ = ["group"]

group: click.Group = _testbed
