"""Puts this folder on sys.path so the kernel tests can import the independent `decoders` module."""

from __future__ import annotations

import sys
from pathlib import Path

KERNEL_TESTS_DIR = Path(__file__).resolve().parent
if str(KERNEL_TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(KERNEL_TESTS_DIR))
