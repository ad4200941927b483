"""The unit tests run without telemetry warnings about the scripted model."""

from __future__ import annotations

import logging

logging.getLogger("google_adk").setLevel(logging.ERROR)
