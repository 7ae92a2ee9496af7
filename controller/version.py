"""The controller's version: one line, rewritten by ``make release`` in the copy it builds.

In a source tree this is the version the tree is on its way to, as a PEP 440 development
release; ``deploy/release.sh`` writes the version it derives from ``git describe`` (``v1.2.0``
tagged: ``1.2.0``; untagged: ``<last tag>+<commits>.g<hash>``) into the copy of the tree it
builds the wheel from, so the wheel, ``tablectl --version`` and the software hash (this file is
one of the hashed ones) all name it. Must never be computed at run time: a table runs no git.
"""

__version__ = "0.2.0.dev0"
