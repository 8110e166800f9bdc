"""A file written with device='gpu' (numba.cuda kernels under the simulator) is byte for byte the file the
CPU backend writes: the identity corpus (tests/identity_corpus.py), run on the simulator."""

from __future__ import annotations

from identity_corpus import identity_tests

globals().update(identity_tests())
